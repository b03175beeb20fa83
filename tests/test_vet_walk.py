"""The parts of `vet` around the rules: the ignore globs, the file walk (symlinks, skipped folders), the manifest walk
up to the repository boundary, and version ranges to SDK majors."""

from __future__ import annotations

from pathlib import Path

import pytest

from scanner.vet.manifests import majors_of_spec, py_sdk, ts_sdk
from scanner.vet.globs import compile_glob
from scanner.vet.walk import WalkOptions, walk


@pytest.mark.parametrize(("pattern", "path", "matches"), [
    ("vendor/", "vendor/x.ts", True), ("vendor/", "src/vendor/x.ts", True), ("/vendor", "src/vendor/x.ts", False),
    ("*.gen.ts", "a/b/c.gen.ts", True), ("src/*.ts", "src/a/b.ts", False), ("src/**/*.ts", "src/a/b.ts", True),
    ("src/**/*.ts", "src/b.ts", True), ("a?.py", "ab.py", True), ("a?.py", "abc.py", False), ("# comment", "x", None),
])
def test_ignore_globs_are_gitignore_style(pattern: str, path: str, matches: bool | None) -> None:
    regex = compile_glob(pattern)
    assert (None if regex is None else bool(regex.match(path))) == matches


def test_the_walk_skips_links_and_dependency_folders(tmp_path: Path) -> None:
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "secret.ts").write_text("x\n", encoding="utf-8")
    root = tmp_path / "root"
    for folder in ("src", "node_modules/dep", ".git", "__pycache__", "build"):
        (root / folder).mkdir(parents=True)
        (root / folder / "a.js").write_text("x\n", encoding="utf-8")
    (root / "src" / "README.md").write_text("x\n", encoding="utf-8")
    (root / "linked").symlink_to(outside, target_is_directory=True)
    (root / "src" / "link.ts").symlink_to(outside / "secret.ts")
    walked = walk(root, WalkOptions())
    assert [p.relative_to(root).as_posix() for p, _ in walked.files] == ["src/a.js"]
    assert walked.notes == ["skipped built output (build): --include-built scans it",
                            "skipped 2 symbolic link(s) (never followed: a link can lead out of the tree; vet its "
                            "target by name): linked …"]  # a linked folder or file is said, not dropped silently
    built = walk(root, WalkOptions(include_built=True))
    assert [p.relative_to(root).as_posix() for p, _ in built.files] == ["build/a.js", "src/a.js"]


def test_the_manifest_walk_stops_at_the_repository(tmp_path: Path) -> None:
    (tmp_path / "package.json").write_text('{"dependencies": {"@modelcontextprotocol/sdk": "^1.0.0"}}',
                                           encoding="utf-8")
    (tmp_path / "requirements.txt").write_text("mcp==1.26.0\n", encoding="utf-8")
    repo = tmp_path / "repo"
    (repo / ".git").mkdir(parents=True)
    (repo / "src").mkdir()
    assert ts_sdk(repo / "src") is None and py_sdk(repo / "src") is None
    ts, py = ts_sdk(tmp_path / "elsewhere"), py_sdk(tmp_path)
    assert ts is not None and (ts.major, ts.manifest) == ("1", tmp_path / "package.json")
    assert py is not None and (py.major, py.manifest) == ("1", tmp_path / "requirements.txt")


@pytest.mark.parametrize(("spec", "majors"), [
    ("^1.17.0", {"1"}), ("~2.1", {"2"}), ("2.x", {"2"}), ("==1.26.0", {"1"}), (">=2,<3", {"2"}),
    (">=2.0.0 <3", {"2"}), (">=1.2", {"1", "2"}), ("*", set()), ("latest", set()),
])
def test_version_ranges_to_sdk_majors(spec: str, majors: set[str]) -> None:
    assert majors_of_spec(spec) == majors


def test_a_python_environment_below_the_root_is_skipped_with_a_note(tmp_path: Path) -> None:
    """`uv sync` / `python -m venv .venv` put the installed mcp SDK inside the project: its own method handlers were
    the project's BREAKING findings (112 for mcp 2.3), failing the build of a clean server."""
    (tmp_path / "server.py").write_text("import mcp\n", encoding="utf-8")
    for env, marker in ((".venv", "pyvenv.cfg"), ("envs/conda", "conda-meta")):
        site = tmp_path / env / "lib" / "site-packages" / "mcp"
        site.mkdir(parents=True)
        (site / "session.py").write_text("x = {'method': 'ping'}\n", encoding="utf-8")
        (tmp_path / env / marker).mkdir() if marker == "conda-meta" else (tmp_path / env / marker).write_text("")
    walked = walk(tmp_path, WalkOptions())
    assert [p.name for p, _ in walked.files] == ["server.py"]
    assert walked.notes == ["skipped 2 Python environment(s) (installed dependencies, not the server's code; name one "
                            "to vet it): .venv …"]
    named = walk(tmp_path / ".venv", WalkOptions())  # a root you name is always read
    assert [p.name for p, _ in named.files] == ["session.py"]


@pytest.mark.parametrize("name, text", [
    ("package.json", '{"dependencies": {"@modelcontextprotocol/sdk": "^1.20.0"}}'),
    ("requirements.txt", "mcp==1.26.0\n"),
    ("pyproject.toml", '[project]\r\nname = "x"\r\ndependencies = ["mcp>=1.2,<2"]\r\n'),
])
def test_a_manifest_with_a_byte_order_mark_is_read(tmp_path: Path, name: str, text: str) -> None:
    """npm and pip read a BOM-prefixed manifest (Windows editors write one); vet found no declaration in it, so the
    v1 advisories it should hold back ran as 'SDK version undetermined'."""
    (tmp_path / name).write_bytes(b"\xef\xbb\xbf" + text.encode())
    found = ts_sdk(tmp_path) if name == "package.json" else py_sdk(tmp_path)
    assert found is not None and (found.major, found.manifest) == ("1", tmp_path / name)


def test_a_re_include_pattern_is_said_to_be_unsupported(tmp_path: Path) -> None:
    """In gitignore `!dist/server.js` brings a file back; here it was a pattern matching nothing, so the file the
    user asked to vet stayed skipped without a word."""
    (tmp_path / "gen").mkdir()
    (tmp_path / "gen" / "server.js").write_text("x\n", encoding="utf-8")
    (tmp_path / ".mcpvetignore").write_text("gen/\n!gen/server.js\n", encoding="utf-8")
    walked = walk(tmp_path, WalkOptions())
    assert walked.files == [] and walked.notes == [
        "skipped 1 re-include pattern(s) of --ignore / .mcpvetignore (`!` is not supported: what the other patterns "
        "name stays skipped): !gen/server.js"]
