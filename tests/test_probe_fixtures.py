"""Fixture files: loading, variable expansion, schema checks with reasons, and the starter-file writer."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import jsonschema
import pytest

from sandbox.run.workspace_seed import seed_manifest
from scanner.errors import UsageError
from scanner.probes.fixtures import (
    FixtureFile,
    expand,
    load_fixtures,
    plan_fixtures,
    schema_mismatch,
    write_starter_fixtures,
)

READ_FILE = {"name": "read_file", "inputSchema": {
    "type": "object", "properties": {"path": {"type": "string"}, "head": {"type": "integer", "minimum": 1}},
    "required": ["path"]}}
SET_MODE = {"name": "set_mode", "inputSchema": {
    "type": "object", "properties": {"mode": {"enum": ["on", "off"]}}, "required": ["mode"]}}


def write(tmp_path: Path, document: Any) -> Path:
    path = tmp_path / "fixtures.json"
    path.write_text(json.dumps(document))
    return path


def test_load_expands_fixtures_dir_and_env(tmp_path: Path) -> None:
    path = write(tmp_path, {"version": 1, "probes": [
        {"tool": "read_file", "label": "readme", "args": {"path": "${FIXTURES_DIR}/README.md",
                                                         "token": "${API_TOKEN}", "alt": "${ENV:API_TOKEN}",
                                                         "literal": "$${NOT_EXPANDED}"}}]})
    fixtures = load_fixtures(path, env={"API_TOKEN": "t-123"})
    args = fixtures.probes[0].args
    assert args == {"path": f"{tmp_path.resolve()}/README.md", "token": "t-123", "alt": "t-123",
                    "literal": "${NOT_EXPANDED}"}


def test_fixtures_dir_can_point_into_the_sandbox(tmp_path: Path) -> None:
    path = write(tmp_path, {"version": 1, "probes": [{"tool": "t", "args": {"p": "${FIXTURES_DIR}/a"}}]})
    fixtures = load_fixtures(path, env={}, fixtures_dir="/workspace/fixtures")
    assert fixtures.probes[0].args == {"p": "/workspace/fixtures/a"}


def test_defaults_of_a_probe(tmp_path: Path) -> None:
    probe = load_fixtures(write(tmp_path, {"version": 1, "probes": [{"tool": "t"}]}), env={}).probes[0]
    assert (probe.args, probe.expect_error, probe.allow_destructive, probe.skip) == ({}, False, False, False)
    assert probe.display_label() == "fixture: t"


@pytest.mark.parametrize(("document", "message"), [
    ({"version": 1, "probes": [{"tool": "t", "args": {"p": "${MISSING_VAR}"}}]}, "MISSING_VAR"),
    ({"version": 2, "probes": []}, "version 2"),
    ({"version": 1, "probes": [{"tool": "t", "expect_eror": True}]}, "expect_eror"),
    ({"version": 1, "probes": [{"args": {}}]}, "tool"),
])
def test_bad_files_are_usage_errors(tmp_path: Path, document: Any, message: str) -> None:
    with pytest.raises(UsageError, match=message):
        load_fixtures(write(tmp_path, document), env={})


def test_not_json_and_missing_file_are_usage_errors(tmp_path: Path) -> None:
    bad = tmp_path / "bad.json"
    bad.write_text("probes: []")
    with pytest.raises(UsageError, match="not valid JSON"):
        load_fixtures(bad, env={})
    with pytest.raises(UsageError, match="does not exist"):
        load_fixtures(tmp_path / "nope.json", env={})


def test_expand_leaves_non_strings_alone() -> None:
    assert expand({"n": 3, "b": True, "l": ["${X}"], "none": None}, {"X": "y"}) == {
        "n": 3, "b": True, "l": ["y"], "none": None}


def test_schema_mismatch_gives_the_reason_and_where() -> None:
    schema = READ_FILE["inputSchema"]
    assert schema_mismatch({"path": "/workspace/a"}, schema) is None
    assert "'path' is a required property" in schema_mismatch({}, schema)
    reason = schema_mismatch({"path": "/workspace/a", "head": 0}, schema)
    assert reason.startswith("at '/head'") and "minimum" in reason


def test_invalid_tool_schema_is_a_refusal_reason() -> None:
    assert "invalid" in schema_mismatch({}, {"type": "no-such-type"})


def test_plan_refuses_bad_args_and_unknown_tools_and_drops_skipped() -> None:
    fixtures = FixtureFile.model_validate({"version": 1, "probes": [
        {"tool": "read_file", "label": "good", "args": {"path": "/workspace/README.md"}},
        {"tool": "read_file", "label": "wrong type", "args": {"path": 3}},
        {"tool": "set_mode", "label": "bad choice", "args": {"mode": "sideways"}},
        {"tool": "nope", "label": "ghost"},
        {"tool": "nope", "label": "skipped", "skip": True},
        {"tool": "set_mode", "label": "expected failure", "args": {"mode": "on"}, "expect_error": True},
    ]})
    accepted, refused = plan_fixtures(fixtures, [READ_FILE, SET_MODE])
    assert [probe.label for probe in accepted] == ["good", "expected failure"]
    reasons = {refusal.label: refusal.reason for refusal in refused}
    assert set(reasons) == {"wrong type", "bad choice", "ghost"}
    assert "not of type 'string'" in reasons["wrong type"]
    assert "'sideways' is not one of" in reasons["bad choice"]
    assert "no tool named 'nope'" in reasons["ghost"]


def test_starter_file_round_trips_and_its_args_validate(tmp_path: Path) -> None:
    path = tmp_path / "starter.json"
    count = write_starter_fixtures(path, [READ_FILE, SET_MODE], seed_manifest())
    assert count == 2
    fixtures = load_fixtures(path, env={})
    assert [probe.tool for probe in fixtures.probes] == ["read_file", "set_mode"]
    for probe, definition in zip(fixtures.probes, [READ_FILE, SET_MODE], strict=True):
        jsonschema.validate(probe.args, definition["inputSchema"])
    accepted, refused = plan_fixtures(fixtures, [READ_FILE, SET_MODE])
    assert len(accepted) == 2 and refused == []


def test_starter_file_does_not_overwrite(tmp_path: Path) -> None:
    path = tmp_path / "starter.json"
    path.write_text("keep me")
    with pytest.raises(UsageError, match="already exists"):
        write_starter_fixtures(path, [READ_FILE], seed_manifest())
    assert path.read_text() == "keep me"
    write_starter_fixtures(path, [READ_FILE], seed_manifest(), overwrite=True)
    assert json.loads(path.read_text())["version"] == 1


def test_unresolvable_or_endless_schemas_are_refusal_reasons_not_crashes() -> None:
    remote = {"type": "object", "properties": {"a": {"$ref": "https://schemas.example.invalid/a.json"}}}
    assert "can't be resolved" in schema_mismatch({"a": 1}, remote)
    dangling = {"type": "object", "properties": {"a": {"$ref": "#/$defs/nope"}}}
    assert "can't be resolved" in schema_mismatch({"a": 1}, dangling)
    assert "refers to itself" in schema_mismatch({}, {"$ref": "#"})


def test_starter_file_carries_hostile_tool_names_as_escapes(tmp_path: Path) -> None:
    """The starter holds the server's own tool names: a bidi override, a C1 control or a line separator in one is
    written as its JSON escape (the same value read back), never raw where an editor or a diff would render it."""
    hostile = "read\u202efile\x85\u2028\U000e0041"
    path = tmp_path / "starter.json"
    write_starter_fixtures(path, [{**READ_FILE, "name": hostile}], seed_manifest())
    raw = path.read_text(encoding="utf-8")
    assert not any(ch in raw for ch in ("\u202e", "\x85", "\u2028", "\U000e0041")), repr(raw)
    assert load_fixtures(path, env={}).probes[0].tool == hostile


def test_starter_file_write_failure_leaves_no_half_file(tmp_path: Path) -> None:
    """A write that fails part-way (here the file-size limit, as a full disk would) leaves no truncated starter."""
    import subprocess
    import sys

    code = (
        "import resource, signal, sys\n"
        "from pathlib import Path\n"
        "from sandbox.run.workspace_seed import seed_manifest\n"
        "from scanner.probes.fixtures import write_starter_fixtures\n"
        "from tests.test_probe_fixtures import READ_FILE, SET_MODE\n"
        "signal.signal(signal.SIGXFSZ, signal.SIG_IGN)\n"
        "resource.setrlimit(resource.RLIMIT_FSIZE, (100, 100))\n"
        "try:\n"
        "    write_starter_fixtures(Path(sys.argv[1]), [READ_FILE, SET_MODE] * 20, seed_manifest())\n"
        "except Exception as exc:\n"
        "    print(type(exc).__name__)\n")
    root = Path(__file__).resolve().parent.parent
    result = subprocess.run([sys.executable, "-c", code, str(tmp_path / "starter.json")], capture_output=True,
                            text=True, cwd=root, timeout=60, env={"PYTHONPATH": str(root), "PATH": "/usr/bin:/bin"})
    assert result.stdout.strip() in ("OSError", "UsageError"), result
    assert list(tmp_path.iterdir()) == []


def test_init_fixtures_checks_the_folder_before_scanning(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                         capsys: pytest.CaptureFixture[str]) -> None:
    """A missing folder was found only after the install and the listing (minutes of work thrown away)."""
    from scanner.pipeline import image_scan
    from tests.cli_helpers import run_main

    def never(*args: Any, **kwargs: Any) -> None:
        raise AssertionError("scanned before the output path was checked")

    monkeypatch.setattr(image_scan, "run_target", never)
    code, out, err = run_main(monkeypatch, capsys, "init-fixtures", tmp_path / "missing" / "f.json", "npm:x",
                              "--upstream-proxy", "none")
    assert code == 2 and err.startswith("error:") and "does not exist" in err and err.count("\n") == 1, err
