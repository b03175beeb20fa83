"""`vet --fix` on temporary copies of the vet fixtures: the mechanical error codes rewritten only where the rules
matched (never in a comment, a string or an unrelated number), nothing written with --dry-run, the file's other
bytes and mode kept, and the exit code that of what is left."""

from __future__ import annotations

import shutil
import stat
from pathlib import Path

import pytest
from typer.testing import CliRunner

from scanner.cli.app import app
from scanner.vet import VetOptions, vet_tree
from scanner.vet.fix import fix_result
from tests.cli_helpers import run_main

FIXTURES = Path(__file__).resolve().parent / "fixtures" / "vet"
RENUMBERED = 'throw new McpError(-32001, "x");\nconst port = -32001; // -32003 in a comment\nconst s = "-32004";\n'


def _copy(tmp_path: Path, name: str) -> Path:
    return Path(shutil.copytree(FIXTURES / name, tmp_path / name))


def _codes(root: Path) -> set[str]:
    return {f.rule_id for f in vet_tree(root, VetOptions()).findings} & {"ERROR_CODE_32002", "ERROR_CODE_RENUMBERED"}


def test_fix_rewrites_the_dirty_fixtures_codes_and_nothing_else(tmp_path: Path) -> None:
    for name in ("dirty_ts", "dirty_js", "dirty_py"):
        root = _copy(tmp_path, name)
        before = {p: p.read_text() for p in root.rglob("*") if p.is_file()}
        assert _codes(root), name  # the fixture has the findings to fix
        outcome = fix_result(vet_tree(root, VetOptions()), dry_run=False)
        assert outcome.fixed and _codes(root) == set(), name
        for path, text in before.items():
            after = path.read_text()
            if path.relative_to(root).as_posix() not in outcome.files:
                assert after == text
            else:  # only the code literals changed, line for line
                changed = [(a, b) for a, b in zip(text.splitlines(), after.splitlines()) if a != b]
                assert changed and len(text.splitlines()) == len(after.splitlines())
                assert all(any(new in b for new in ("-32602", "-32020", "-32021", "-32022")) for _, b in changed)


def test_only_the_error_code_position_is_rewritten_and_the_mode_is_kept(tmp_path: Path) -> None:
    source = tmp_path / "server.ts"
    source.write_text("import { McpError } from '@modelcontextprotocol/sdk/types.js';\n" + RENUMBERED)
    source.chmod(0o640)
    fix_result(vet_tree(tmp_path, VetOptions()), dry_run=False)
    text = source.read_text()
    assert 'McpError(-32020, "x")' in text and "const port = -32001; // -32003 in a comment" in text
    assert 'const s = "-32004";' in text and stat.S_IMODE(source.stat().st_mode) == 0o640
    assert [p.name for p in tmp_path.iterdir()] == ["server.ts"]  # no temporary file left


def test_dry_run_prints_the_diff_and_writes_nothing(tmp_path: Path) -> None:
    root = _copy(tmp_path, "dirty_ts")
    before = {p: p.read_bytes() for p in root.rglob("*") if p.is_file()}
    result = CliRunner().invoke(app, ["vet", str(root), "-q", "--fix", "--dry-run", "--fail-on", "none"])
    assert result.exit_code == 0, result.output
    assert "+++ b/" in result.stdout and "-32602" in result.stdout
    assert {p: p.read_bytes() for p in root.rglob("*") if p.is_file()} == before


def test_the_exit_code_is_that_of_what_the_fix_leaves(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                     capsys: pytest.CaptureFixture[str]) -> None:
    (tmp_path / "only_codes.ts").write_text("import { McpError } from '@modelcontextprotocol/sdk/types.js';\n"
                                            'throw new McpError(-32002, "Resource not found");\n')
    runner = CliRunner()
    assert runner.invoke(app, ["vet", str(tmp_path), "-q"]).exit_code == 1
    assert runner.invoke(app, ["vet", str(tmp_path), "-q", "--fix"]).exit_code == 0
    assert runner.invoke(app, ["vet", str(tmp_path), "-q"]).exit_code == 0  # fixed on disk
    code, out, err = run_main(monkeypatch, capsys, "vet", tmp_path, "--dry-run")
    assert code == 2 and out == "" and err.startswith("error: --dry-run only goes with --fix")


@pytest.mark.parametrize("name, source, wanted, kept", [
    # a form feed is a line break to str.splitlines but not to Python: the rewrite once landed a line early, on an
    # unrelated number at the same column, and left the error code as it was
    ("paged.py", "from mcp import McpError\n\x0c\nz = logging_(-32001)  # not a code\ny = McpError(-32001)\n",
     "y = McpError(-32020)", "z = logging_(-32001)"),
    # U+2028 inside a JavaScript string is no line break to tree-sitter either
    ("sep.js", 'const a = {code: -32002};\nconst s = "\u2028";\nconst b = {code: -32001};\n',
     "const b = {code: -32020};", "const s = \"\u2028\";"),
    # a lone CR is a line break to Python (and to its line numbers) but not to a split on LF
    ("mac.py", "import mcp\rx = 1\ry = {'code': -32002}\r", "y = {'code': -32602}", "x = 1\r"),
])
def test_fix_rewrites_the_line_the_parser_counted(tmp_path: Path, name: str, source: str, wanted: str,
                                                  kept: str) -> None:
    path = tmp_path / name
    path.write_bytes(source.encode())
    outcome = fix_result(vet_tree(tmp_path, VetOptions()), dry_run=False)
    text = path.read_bytes().decode()
    assert wanted in text and kept in text, text
    assert _codes(tmp_path) == set() and outcome.files == [name]


def test_a_python_file_with_a_byte_order_mark_is_vetted_and_fixed_in_place(tmp_path: Path) -> None:
    """Python runs a file that starts with a UTF-8 BOM (Windows editors write one); vet once called it invalid."""
    path = tmp_path / "server.py"
    path.write_bytes(b"\xef\xbb\xbfraise McpError(code=-32002)\r\nx = {'method': 'ping'}\r\n")
    result = vet_tree(tmp_path, VetOptions())
    assert [(f.rule_id, f.line, f.column) for f in result.findings] == [
        ("ERROR_CODE_32002", 1, 22), ("PING_REMOVED", 2, 16)], result.notes
    fix_result(result, dry_run=False)
    assert path.read_bytes() == b"\xef\xbb\xbfraise McpError(code=-32602)\r\nx = {'method': 'ping'}\r\n"


def test_the_dry_run_diff_is_a_patch_git_applies(tmp_path: Path) -> None:
    """A file without a final newline glued the old and the new line into one ('-const x = …;+const x = …;':
    `git apply` said 'corrupt patch'), and a newline in a file name ended the header early."""
    (tmp_path / "a.js").write_text("const a = 1;\nconst x = {code: -32002};", encoding="utf-8")
    (tmp_path / "b\nc.js").write_text("const y = {code: -32001};\r\n", encoding="utf-8")
    diffs = fix_result(vet_tree(tmp_path, VetOptions()), dry_run=True).diffs
    assert diffs == [
        "--- a/a.js\n+++ b/a.js\n@@ -1,2 +1,2 @@\n const a = 1;\n-const x = {code: -32002};\n"
        "\\ No newline at end of file\n+const x = {code: -32602};\n\\ No newline at end of file\n",
        '--- "a/b\\nc.js"\n+++ "b/b\\nc.js"\n@@ -1 +1 @@\n-const y = {code: -32001};\r\n+const y = {code: -32020};\r\n']
    git = shutil.which("git")
    if git is not None:  # and git takes it as it is
        import subprocess

        subprocess.run([git, "init", "-q", str(tmp_path)], check=True)
        applied = subprocess.run([git, "apply", "--check", "-"], input="".join(diffs).encode(), cwd=tmp_path,
                                 capture_output=True)
        assert applied.returncode == 0, applied.stderr


def test_a_file_it_cannot_write_is_said_and_the_others_are_still_fixed(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    """A folder --fix may not write in (read-only checkout, immutable folder) was an internal error: exit 3, no
    findings shown, and the files fixed before it changed without a word."""
    import tempfile

    (tmp_path / "locked").mkdir()
    (tmp_path / "locked" / "a.js").write_text("const x = {code: -32002};\n", encoding="utf-8")
    (tmp_path / "b.js").write_text("const y = {code: -32002};\n", encoding="utf-8")
    real = tempfile.mkstemp

    def mkstemp(*args: object, dir: Path, **kwargs: object) -> tuple[int, str]:  # noqa: A002 - tempfile's name
        if Path(dir).name == "locked":
            raise PermissionError(1, "Operation not permitted")
        return real(*args, dir=dir, **kwargs)  # type: ignore[call-overload]

    monkeypatch.setattr(tempfile, "mkstemp", mkstemp)
    code, out, err = run_main(monkeypatch, capsys, "vet", tmp_path, "--fix")
    assert code == 1 and "Traceback" not in err and "internal error" not in err
    assert "not fixed: locked/a.js could not be written (Operation not permitted)" in err and "fixed: b.js" in err
    assert "locked/a.js:1:18: ERROR_CODE_32002" in out
    assert (tmp_path / "b.js").read_text(encoding="utf-8") == "const y = {code: -32602};\n"


def test_a_cr_only_python_file_keeps_its_suppressions_and_snippets(tmp_path: Path) -> None:
    """Python ends a line at a lone CR; vet's own line list split at LF only, so a directive on line 2 of a CR file
    silenced nothing and every snippet was empty."""
    (tmp_path / "cr.py").write_bytes(b'import mcp\rx = {"method": "ping"}  # mcp-vet-disable-line PING_REMOVED\r'
                                     b'y = {"code": -32002}\r')
    result = vet_tree(tmp_path, VetOptions())
    assert [(s.line, s.rule_id) for s in result.suppressed] == [(2, "PING_REMOVED")]
    assert [(f.line, f.rule_id, f.before.splitlines()[0]) for f in result.findings] == [
        (3, "ERROR_CODE_32002", '3: y = {"code": -32002}')]


def test_the_fixed_file_keeps_its_owner_where_the_process_may_set_it(tmp_path: Path) -> None:
    """Run as root (a CI container over the user's checkout), the replaced file became root's."""
    import os

    path = tmp_path / "a.js"
    path.write_text("const x = {code: -32002};\n", encoding="utf-8")
    try:
        os.chown(path, 4321, 4322)
    except PermissionError:
        pytest.skip("only root can give a file away")
    fix_result(vet_tree(tmp_path, VetOptions()), dry_run=False)
    info = path.stat()
    assert path.read_text(encoding="utf-8") == "const x = {code: -32602};\n"
    assert (info.st_uid, info.st_gid) == (4321, 4322)
