"""`vet` reads a hostile package's files on the user's host: a FIFO, a backtracking `.mcpvetignore` or lockfile, a
malformed or deeply nested manifest, a non-UTF-8 file under --fix must each end in a note or a skipped check, never
a hang or an internal error. Each case runs in a child process with a time limit, so a regression fails, not hangs."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from scanner.vet.globs import compile_glob

ROOT = Path(__file__).resolve().parent.parent


def _vet(*args: str, timeout: float = 30) -> subprocess.CompletedProcess[str]:
    """`mcp-sandbox vet ARGS` in a child process; a run past `timeout` fails the test instead of hanging it."""
    try:
        return subprocess.run([sys.executable, "-m", "scanner", "vet", *args], capture_output=True, text=True,
                              timeout=timeout, cwd=ROOT)
    except subprocess.TimeoutExpired:
        pytest.fail(f"vet {' '.join(args)} ran past {timeout}s")


def test_a_fifo_named_like_source_is_skipped_with_a_note_not_opened(tmp_path: Path) -> None:
    os.mkfifo(tmp_path / "a.py")
    (tmp_path / "b.py").write_text("x = 1\n", encoding="utf-8")
    done = _vet(str(tmp_path), timeout=20)
    assert done.returncode == 0, done.stderr
    assert "1 file(s) scanned" in done.stdout
    assert "skipped 1 special file(s) (a FIFO, socket or device: never opened): a.py" in done.stdout


def test_a_backtracking_ignore_glob_is_matched_in_linear_time(tmp_path: Path) -> None:
    folder = tmp_path / ("x" * 60)
    folder.mkdir()
    (folder / ("x" * 100 + ".py")).write_text("x = 1\n", encoding="utf-8")
    (tmp_path / ".mcpvetignore").write_text("**x**x**x**x**x**x**x**x**z\n", encoding="utf-8")
    done = _vet(str(tmp_path), timeout=20)
    assert done.returncode == 0, done.stderr
    assert "1 file(s) scanned" in done.stdout


@pytest.mark.parametrize(("pattern", "path", "matches"), [
    ("**", "a/b", True), ("a/**", "a/b/c.ts", True), ("a/**", "a", False), ("**/b", "b", True),
    ("**/b", "x/y/b/c.ts", True), ("a*", "b/ab/c", True), ("/a*", "b/ab", False), ("a*b", "a/b", False),
    ("*.ts", "x.ts.bak", False), ("a**b", "a/x/b", True), ("a?c", "a/c", False),
])
def test_globs_keep_their_gitignore_meaning(pattern: str, path: str, matches: bool) -> None:
    glob = compile_glob(pattern)
    assert glob is not None and glob.match(path) is matches


def test_a_yarn_lock_of_blank_indented_lines_does_not_backtrack(tmp_path: Path) -> None:
    (tmp_path / "yarn.lock").write_text('"@modelcontextprotocol/sdk@^1:\n' + "  \n" * 40, encoding="utf-8")
    (tmp_path / "a.ts").write_text("const x = 1;\n", encoding="utf-8")
    done = _vet(str(tmp_path), timeout=20)
    assert done.returncode == 0, done.stderr


@pytest.mark.parametrize(("name", "text"), [
    ("package.json", '{"dependencies": ' + "[" * 100_000 + "]" * 100_000 + "}"),
    ("package-lock.json", '{"packages": ' + "[" * 100_000 + "]" * 100_000 + "}"),
    ("pyproject.toml", "a = " + "[" * 100_000 + "]" * 100_000 + "\n"),
    ("pyproject.toml", 'project = "x"\n'),
    ("pyproject.toml", "[project]\ndependencies = 5\n"),
    ("pyproject.toml", '[project]\ndependencies = ["mcp>=1"]\noptional-dependencies = {a = 5}\n'),
    ("pyproject.toml", '[project]\ndependencies = ["mcp>=1"]\n[tool]\npoetry = "x"\n'),
    ("uv.lock", 'package = "x"\n'),
    ("uv.lock", "package = [5]\n"),
])
def test_a_malformed_or_deep_manifest_decides_nothing_and_vet_goes_on(tmp_path: Path, name: str, text: str) -> None:
    (tmp_path / name).write_text(text, encoding="utf-8")
    (tmp_path / "a.py").write_text("import mcp\n", encoding="utf-8")
    (tmp_path / "b.ts").write_text("import { Server } from '@modelcontextprotocol/sdk/server/index.js';\n",
                                   encoding="utf-8")
    done = _vet(str(tmp_path))
    assert done.returncode == 0, done.stderr
    assert "2 file(s) scanned" in done.stdout


def test_fix_leaves_a_file_that_is_not_utf8_as_it_is_and_says_so(tmp_path: Path) -> None:
    source = tmp_path / "a.ts"
    source.write_bytes(b"const e = { code: -32002 }; // \xff\xfe\n")
    done = _vet("--fix", str(tmp_path))
    assert done.returncode == 1, done.stderr
    assert "not fixed: a.ts is not UTF-8" in done.stderr
    assert "ERROR_CODE_32002" in done.stdout
    assert source.read_bytes() == b"const e = { code: -32002 }; // \xff\xfe\n"


@pytest.mark.parametrize(("name", "source"), [
    ("chain.ts", "a[k] =\n" * 200_000 + "1;\n"),  # each assignment read the text of all the ones to its right
    ("iife.js", "(function(){\n" + "var q = 1;\n" * 60_000 + "})(\n" + '"roots",\n' * 60_000 + ");\n"),
    ("wide.js", "f(\n" + '"initialize",\n' * 100_000 + ");\n"),  # node.parent walked every sibling before it
])
def test_typescript_shapes_that_cost_the_square_of_the_file_end_in_time(tmp_path: Path, name: str,
                                                                         source: str) -> None:
    (tmp_path / name).write_text(source, encoding="utf-8")
    done = _vet(str(tmp_path), timeout=60)
    assert done.returncode in (0, 1), done.stderr
    assert "1 file(s) scanned" in done.stdout or f"not vetted: {name}: not read (nested deeper" in done.stdout
