"""`mcp-sandbox vet` as a user runs it: compiler-style lines, exit codes per --fail-on, one-line errors (exit 2),
JSON, SARIF with physical locations (validated against the SARIF 2.1.0 schema), Markdown, GitHub annotations, and
the walk's skips (built output, --ignore, .mcpvetignore, --max-file-size, minified bundles) said as notes."""

from __future__ import annotations

import json
import os
import shutil
from pathlib import Path
from typing import Any

import jsonschema
import pytest

from tests.cli_helpers import run_main
from tests.vet_helpers import CORPUS

SARIF_SCHEMA = Path(__file__).resolve().parent / "fixtures" / "sarif-schema-2.1.0.json"


@pytest.fixture()
def cli(monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> Any:
    return lambda *args: run_main(monkeypatch, capsys, *args)


@pytest.fixture()
def repo(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A checkout with the dirty TypeScript server under src/, and the cwd at its top (as in CI)."""
    shutil.copytree(CORPUS / "dirty_ts", tmp_path / "src")
    monkeypatch.chdir(tmp_path)
    return tmp_path


def test_compiler_style_lines_and_exit_1_on_breaking(repo: Path, cli: Any) -> None:
    code, out, err = cli("vet", "src")
    assert code == 1 and err == ""
    assert "src/server.ts:24:32: PING_REMOVED [BREAKING/high] ping removed: the specification says" in out
    assert out.strip().splitlines()[-1].startswith("vet: 2 file(s) scanned: ")


@pytest.mark.parametrize(("fail_on", "expected"), [("breaking", 0), ("any", 1), ("none", 0)])
def test_fail_on_with_only_deprecated_findings(tmp_path: Path, cli: Any, fail_on: str, expected: int) -> None:
    (tmp_path / "a.ts").write_text("const caps = { capabilities: { sampling: {} } };\n", encoding="utf-8")
    assert cli("vet", tmp_path, "--fail-on", fail_on, "-q")[0] == expected


def test_clean_source_exits_0(cli: Any) -> None:
    code, out, _ = cli("vet", CORPUS / "clean_ts", CORPUS / "clean_py", "--fail-on", "any")
    assert code == 0 and "2 file(s) scanned: no findings" in out


@pytest.mark.parametrize("args", [("vet", "no-such-folder"), ("vet", ".", "--fail-on", "sometimes"),
                                  ("vet", ".", "--min-confidence", "certain"), ("vet", ".", "--max-file-size", "-1"),
                                  ("vet", ".", "--json", "-", "--sarif", "-"), ("vet", "notes.txt")])
def test_unusable_input_is_one_line_and_exit_2(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, cli: Any,
                                               args: tuple[str, ...]) -> None:
    monkeypatch.chdir(tmp_path)
    (tmp_path / "notes.txt").write_text("ping\n", encoding="utf-8")
    code, out, err = cli(*args)
    assert code == 2 and out == ""
    assert len(err.strip().splitlines()) == 1 and err.startswith("error: ") and "Traceback" not in err


def test_json_on_stdout_moves_the_terminal_view_to_stderr(repo: Path, cli: Any) -> None:
    code, out, err = cli("vet", "src", "--json", "-")
    document = json.loads(out)
    assert code == 1 and "PING_REMOVED [BREAKING/high]" in err
    first = document["findings"][0]
    assert {"file", "line", "column", "rule_id", "tier", "confidence", "message", "before", "after",
            "doc_url"} <= set(first)
    assert document["files_scanned"] == 2 and document["sdk"] == {"src/package.json": "1"}


def test_sarif_places_every_alert_on_its_line(repo: Path, cli: Any) -> None:
    cli("vet", "src", "--sarif", "out.sarif", "-q")
    sarif = json.loads((repo / "out.sarif").read_text(encoding="utf-8"))
    jsonschema.Draft4Validator(json.loads(SARIF_SCHEMA.read_text(encoding="utf-8"))).validate(sarif)
    results = sarif["runs"][0]["results"]
    assert results
    for result in results:
        location = result["locations"][0]["physicalLocation"]
        uri, region = location["artifactLocation"]["uri"], location["region"]
        line = (repo / uri).read_text(encoding="utf-8").splitlines()[region["startLine"] - 1]
        rules = sarif["runs"][0]["tool"]["driver"]["rules"]
        assert rules[result["ruleIndex"]]["id"] == result["ruleId"]
        assert uri.startswith("src/") and f"expect: " in line and result["ruleId"] in line
        assert region["startColumn"] >= 1


def test_markdown_and_annotations(repo: Path, cli: Any) -> None:
    cli("vet", "src", "--markdown", "report.md", "-q")
    markdown = (repo / "report.md").read_text(encoding="utf-8")
    assert "| `src/server.ts:24:32` | [PING_REMOVED](https://modelcontextprotocol.io/specification/2026-07-28/" \
        in markdown
    code, out, _ = cli("vet", "src", "--github-annotations", "-q")
    assert "::error file=src/server.ts,line=24,title=PING_REMOVED [BREAKING/high]::ping removed" in out
    assert "::warning file=src/oauth_client.ts,line=5,title=OAUTH_DCR [DEPRECATED/medium]::" in out


def test_built_output_is_skipped_with_a_note_unless_asked(tmp_path: Path, cli: Any) -> None:
    (tmp_path / "dist").mkdir()
    (tmp_path / "dist" / "index.js").write_text('if (m.method === "ping") {}\n', encoding="utf-8")
    code, out, _ = cli("vet", tmp_path)
    assert code == 0 and "note: skipped built output (dist): --include-built scans it" in out
    assert cli("vet", tmp_path, "--include-built")[0] == 1
    assert cli("vet", tmp_path / "dist")[0] == 1  # a built folder given as the root is scanned


def test_ignore_globs_and_mcpvetignore(tmp_path: Path, cli: Any) -> None:
    for name in ("gen/a.ts", "keep/b.ts", "vendor/c.py"):
        (tmp_path / name).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / name).write_text('const x = { method: "tasks/list" };\n' if name.endswith(".ts")
                                     else 'x = {"method": "tasks/list"}\n', encoding="utf-8")
    (tmp_path / ".mcpvetignore").write_text("# generated\nvendor/\n", encoding="utf-8")
    code, out, _ = cli("vet", tmp_path, "--ignore", "gen/**", "--json", "-")
    assert [f["file"] for f in json.loads(out)["findings"]] == ["keep/b.ts"]


def test_big_and_minified_files_are_notes(tmp_path: Path, cli: Any) -> None:
    (tmp_path / "big.py").write_text("x = 1\n" * 4000, encoding="utf-8")
    (tmp_path / "bundle.js").write_text("var a=" + "1+" * 3000 + "1;\n", encoding="utf-8")
    code, out, _ = cli("vet", tmp_path, "--max-file-size", "10")  # big.py is 24 KB, the bundle 6 KB
    assert "note: skipped 1 file(s) over --max-file-size 10 KB: big.py" in out
    assert "note: not vetted: 1 minified bundle(s)" in out and "0 file(s) scanned" in out
    code, out, _ = cli("vet", tmp_path, "--max-file-size", "0")
    assert "over --max-file-size" not in out and "1 file(s) scanned" in out


def test_hostile_file_names_and_deep_nesting(tmp_path: Path, cli: Any) -> None:
    (tmp_path / "evil\x1b[31m.ts").write_text('if (m.method === "ping") {}\n', encoding="utf-8")
    (tmp_path / "deep.js").write_text("x = " + "[\n" * 20_000 + "]\n" * 20_000, encoding="utf-8")  # not one line
    (tmp_path / "deep.py").write_text("x = " + "(" * 300 + "1" + ")" * 300 + "\n", encoding="utf-8")
    code, out, err = cli("vet", tmp_path, "--max-file-size", "0")
    assert code == 1 and "\x1b" not in out and "PING_REMOVED" in out
    assert "note: not vetted: deep.py: not valid Python" in out and "minified" not in out
    assert "note: not vetted: deep.js: not read (nested deeper than 1000 levels" in out  # said, never a hang
    assert "1 file(s) scanned" in out  # evil…ts


def test_sarif_keeps_the_most_severe_results_code_scanning_stores(monkeypatch: pytest.MonkeyPatch) -> None:
    """A tree with thousands of findings: the log keeps the 5,000 most severe (breaking first), says how many it left
    out, and stays valid SARIF; a log under the bound keeps every result and says nothing of omissions."""
    from scanner.report import sarif_cap
    from scanner.vet.model import Tier, VetFinding, VetResult
    from scanner.vet.sarif import to_sarif

    monkeypatch.setattr(sarif_cap, "MAX_RESULTS", 3)

    def finding(line: int, rule: str, tier: Tier) -> VetFinding:
        return VetFinding(file="src/a.ts", line=line, column=1, end_column=2, rule_id=rule, tier=tier,
                          confidence="high", message="m", before="b", after="a", doc_url="https://x.invalid")

    from scanner.vet.catalogue import VET_RULES
    breaking = next(r.id for r in VET_RULES if r.tier is Tier.BREAKING)
    advisory = next(r.id for r in VET_RULES if r.tier is Tier.ADVISORY)
    findings = [finding(1, advisory, Tier.ADVISORY), finding(2, breaking, Tier.BREAKING),
                finding(3, advisory, Tier.ADVISORY), finding(4, breaking, Tier.BREAKING),
                finding(5, breaking, Tier.BREAKING)]
    run = to_sarif(VetResult(root=Path("."), findings=findings))["runs"][0]
    assert [r["locations"][0]["physicalLocation"]["region"]["startLine"] for r in run["results"]] == [2, 4, 5]
    assert run["properties"]["resultsOmitted"] == 2
    jsonschema.Draft4Validator(json.loads(SARIF_SCHEMA.read_text(encoding="utf-8"))).validate(
        to_sarif(VetResult(root=Path("."), findings=findings)))
    whole = to_sarif(VetResult(root=Path("."), findings=findings[:3]))["runs"][0]  # near miss: under the bound
    assert len(whole["results"]) == 3 and "resultsOmitted" not in whole["properties"]


def test_sarif_writes_each_path_as_a_uri_that_names_its_file(tmp_path: Path, cli: Any,
                                                             monkeypatch: pytest.MonkeyPatch) -> None:
    """A space, `#` or `%` in a file name went into artifactLocation.uri as it was: `#1` reads as a fragment and
    `%20` as an encoded space, so code scanning put the alert on another file, or none."""
    from urllib.parse import unquote

    names = ["my server.ts", "tool#1.ts", "100%20.ts", "@scope.ts", "line\nbreak.ts", "\udcff\udcfe.ts"]
    for name in names:  # the last is the bytes ff fe: no UTF-8 name, as os reads it
        (tmp_path / name).write_text('const e = { code: -32002 }; // 😀\n', encoding="utf-8")
    monkeypatch.chdir(tmp_path)
    cli("vet", ".", "--sarif", "out.sarif", "-q")
    run = json.loads((tmp_path / "out.sarif").read_text(encoding="utf-8"))["runs"][0]
    uris = [r["locations"][0]["physicalLocation"]["artifactLocation"]["uri"] for r in run["results"]]
    assert sorted(unquote(u, errors="surrogateescape") for u in uris) == sorted(names)
    assert not any(c in u for u in uris for c in " #\n") and {"100%2520.ts", "%FF%FE.ts"} <= set(uris)
    assert run["columnKind"] == "unicodeCodePoints"


def test_a_long_string_literal_does_not_make_a_file_a_bundle(tmp_path: Path, cli: Any) -> None:
    """server-everything's get-tiny-image.js holds its icon as one 5,400-character base64 line: the whole file, a
    hand-written tool, was skipped as a minified bundle, and a break in it would never have been reported."""
    image = "iVBORw0KGgo" * 600
    (tmp_path / "icon.js").write_text(f'export const LOGO = "{image}";\nserver.setRequestHandler("ping", h);\n',
                                      encoding="utf-8")
    (tmp_path / "keys.py").write_text(f"import mcp\nKEYS = ['{image}', '{image}']\nx = {{'code': -32002}}\n",
                                      encoding="utf-8")
    (tmp_path / "bundle.js").write_text('var a=' + 'f("x");' * 1000 + '\n', encoding="utf-8")  # code: skipped
    code, out, _ = cli("vet", tmp_path)
    assert "icon.js:2:26: PING_REMOVED" in out and "keys.py:3:14: ERROR_CODE_32002" in out
    assert "note: not vetted: 1 minified bundle(s) or generated file(s)" in out and ": bundle.js" in out


def test_a_root_given_twice_is_read_once(repo: Path, cli: Any) -> None:
    """`vet src ./src src/` vetted the folder three times and reported every finding three times."""
    _, once, _ = cli("vet", "src", "--json", "-", "-q")
    code, thrice, _ = cli("vet", "src", "./src", "src/", "--json", "-", "-q")
    assert code == 1
    assert json.loads(thrice)["findings"] == json.loads(once)["findings"] != []


@pytest.mark.parametrize("args", [("vet", "pipe"), ("vet", "/dev/null"), ("vet", "src", "--json", "src/server.ts"),
                                  ("vet", "src", "--fix", "--dry-run", "--json", "-"),
                                  ("vet", "src", "--fix", "--dry-run", "--github-annotations")])
def test_inputs_and_outputs_that_would_lose_a_result_are_exit_2(repo: Path, cli: Any, args: tuple[str, ...]) -> None:
    """A pipe or a device was vetted as an empty tree (exit 0, "no findings"); `--json src/server.ts` replaced the
    code it vetted; `--fix --dry-run --json -` put the diff and the JSON on stdout as one invalid document."""
    os.mkfifo(repo / "pipe")
    before = (repo / "src" / "server.ts").read_bytes()
    code, out, err = cli(*args)
    assert (code, out) == (2, "") and err.startswith("error: ") and err.count("\n") == 1, err
    assert (repo / "src" / "server.ts").read_bytes() == before


def test_fail_on_never_means_none_as_on_every_other_command(tmp_path: Path, cli: Any) -> None:
    (tmp_path / "a.ts").write_text('server.setRequestHandler("ping", () => ({}));\n', encoding="utf-8")
    assert cli("vet", tmp_path, "--fail-on", "breaking", "-q")[0] == 1
    assert cli("vet", tmp_path, "--fail-on", "never", "-q")[0] == cli("vet", tmp_path, "--fail-on", "none", "-q")[0] == 0


def test_a_terminal_sees_which_root_is_being_vetted(repo: Path) -> None:
    """A large tree (site-packages: most of a minute) was read without a sign of life."""
    import subprocess
    import sys

    root = Path(__file__).resolve().parent.parent
    env = {"PYTHONPATH": str(root), "PATH": "/usr/bin:/bin", "TTY_COMPATIBLE": "1", "TTY_INTERACTIVE": "1"}
    shown = subprocess.run([sys.executable, "-m", "scanner", "vet", "src", "-q", "--fail-on", "none"], cwd=repo,
                           env=env, capture_output=True, timeout=60)
    assert shown.returncode == 0 and b"vetting src" in shown.stderr
    env.pop("TTY_COMPATIBLE"), env.pop("TTY_INTERACTIVE")
    piped = subprocess.run([sys.executable, "-m", "scanner", "vet", "src", "-q", "--fail-on", "none"], cwd=repo,
                           env=env, capture_output=True, timeout=60)
    assert piped.returncode == 0 and piped.stderr == b""  # a log or a pipe gets no spinner
