"""Issue 14 §3, the envelope of an Agent Plugins 1.0.0 package (offline, no Docker): every rule with mcp-vet 0.15's
id and tier fires on tests/fixtures/plugins/* and stays silent on the near misses of the `clean` fixture; and what
mcp-vet misses: symlinks out of the plugin, invalid and duplicate header names, SKILL.md outside skills/, and a
folder named `..cache` that is no escape."""

from __future__ import annotations

import hashlib
import json
import os
import shutil
from pathlib import Path

import pytest
from jsonschema import Draft202012Validator

from scanner.plugins.catalogue import plugin_rules
from scanner.plugins.envelope import check_plugin
from scanner.plugins.model import EnvelopeResult
from scanner.plugins.remote import is_loopback
from scanner.plugins.views import as_json, to_sarif
from tests.cli_helpers import run_main

FIXTURES = Path(__file__).resolve().parent / "fixtures" / "plugins"
SCHEMAS = Path(__file__).resolve().parent.parent / "scanner" / "plugins" / "schemas"
TIERS = {"PLUGIN_MANIFEST_INVALID": "FATAL", "PLUGIN_UNKNOWN_FIELD": "TOLERATED",
         "PLUGIN_EXTENSIONS_NOT_OBJECT": "TOLERATED", "PLUGIN_NAME_RE2_LOOKAHEAD": "INFO",
         "PLUGIN_MCP_INVALID": "BREAKING", "PLUGIN_CMD_NOT_SINGLE_TOKEN": "BREAKING", "PLUGIN_CWD_ESCAPE": "BREAKING",
         "PLUGIN_ENV_RESERVED": "BREAKING", "PLUGIN_REMOTE_INSECURE_URL": "BREAKING",
         "PLUGIN_SSE_TRANSPORT": "DEPRECATED", "PLUGIN_SKILL_LAYOUT": "DEPRECATED"}


def _by_server(result: EnvelopeResult) -> dict[str, set[str]]:
    found: dict[str, set[str]] = {}
    for finding in result.findings:
        found.setdefault(finding.server or finding.file, set()).add(finding.rule_id)
    return found


def test_the_catalogue_has_mcp_vets_ids_and_tiers() -> None:
    assert {rule.id: rule.tier for rule in plugin_rules().values()} == TIERS
    assert all(rule.section for rule in plugin_rules().values())


def test_the_vendored_schemas_are_the_published_ones() -> None:
    notice = (SCHEMAS / "NOTICE.md").read_text("utf-8")
    for name in ("plugin.schema.json", "mcp.schema.json"):
        data = (SCHEMAS / name).read_bytes()
        assert hashlib.sha256(data).hexdigest() in notice
        schema = json.loads(data)
        Draft202012Validator.check_schema(schema)
        assert schema["$id"] == f"https://agent-plugins.org/schemas/1.0.0/{name}"
    assert "CC-BY-4.0" in notice and "Apache" in notice


def test_a_clean_plugin_and_its_near_misses_have_no_finding() -> None:
    """https, 127.3.4.5, [::1] and localhost; cwd ./..cache, ${PLUGIN_ROOT}/…, ${PLUGIN_DATA}/cache/..x; an env name
    that merely begins with PLUGIN_ROOT; anything inside an object `extensions`; a SKILL.md in an extension folder."""
    result = check_plugin(FIXTURES / "clean")
    assert result.findings == []
    assert (result.name, result.skills, len(result.servers)) == ("clean.plugin-1", 1, 7)


def test_no_mcp_json_is_valid_and_silent() -> None:
    result = check_plugin(FIXTURES / "no-mcp")
    assert (result.findings, result.has_mcp_json, result.servers) == ([], False, [])


@pytest.mark.parametrize(("fixture", "section"), [("no-manifest", "5.1"), ("not-json", "5.1")])
def test_a_missing_or_unparsable_manifest_is_fatal(fixture: str, section: str) -> None:
    (finding,) = check_plugin(FIXTURES / fixture).findings
    assert (finding.rule_id, finding.tier, finding.cited) == ("PLUGIN_MANIFEST_INVALID", "FATAL", section)


def test_manifest_findings_split_by_what_a_client_does() -> None:
    findings = check_plugin(FIXTURES / "bad-manifest").sorted_findings()
    got = [(f.line, f.rule_id, f.cited) for f in findings]
    assert got == [(2, "PLUGIN_MANIFEST_INVALID", "5.2"), (3, "PLUGIN_MANIFEST_INVALID", "5.5"),
                   (3, "PLUGIN_NAME_RE2_LOOKAHEAD", "5.5"), (4, "PLUGIN_UNKNOWN_FIELD", "5.2"),
                   (5, "PLUGIN_UNKNOWN_FIELD", "5.2"), (7, "PLUGIN_EXTENSIONS_NOT_OBJECT", "8.1"),
                   (8, "PLUGIN_MANIFEST_INVALID", "5.4")]
    unknown = [f.message for f in findings if f.rule_id == "PLUGIN_UNKNOWN_FIELD"]
    assert "skills declared here will NOT load" in unknown[0] and "§6.1" in unknown[0]
    assert "MCP servers declared here will NOT load" in unknown[1]
    assert not any("homepage" in f.message for f in findings)  # a known field is no unknown field


def test_a_valid_name_draws_no_re2_note(tmp_path: Path) -> None:
    shutil.copytree(FIXTURES / "no-mcp", tmp_path / "p")
    manifest = json.loads((tmp_path / "p" / "plugin.json").read_text())
    manifest["name"] = "a.b-c"
    (tmp_path / "p" / "plugin.json").write_text(json.dumps(manifest))
    assert check_plugin(tmp_path / "p").findings == []


def test_every_mcp_rule_fires_on_its_server() -> None:
    found = _by_server(check_plugin(FIXTURES / "bad-mcp"))
    assert found == {
        "shell": {"PLUGIN_CMD_NOT_SINGLE_TOKEN"}, "pathy": {"PLUGIN_CMD_NOT_SINGLE_TOKEN"},
        "climb": {"PLUGIN_CWD_ESCAPE"}, "noprefix": {"PLUGIN_CWD_ESCAPE"}, "dataclimb": {"PLUGIN_CWD_ESCAPE"},
        "reserved": {"PLUGIN_ENV_RESERVED"}, "outside": {"PLUGIN_MCP_INVALID"},
        "lookalike": {"PLUGIN_REMOTE_INSECURE_URL"}, "mapped": {"PLUGIN_REMOTE_INSECURE_URL"},
        "anyaddr": {"PLUGIN_REMOTE_INSECURE_URL"}, "creds": {"PLUGIN_REMOTE_INSECURE_URL"},
        "fragment": {"PLUGIN_REMOTE_INSECURE_URL"}, "relative": {"PLUGIN_REMOTE_INSECURE_URL"},
        "legacy": {"PLUGIN_SSE_TRANSPORT"}, "headers": {"PLUGIN_MCP_INVALID"}, "weird": {"PLUGIN_MCP_INVALID"},
        "mixed": {"PLUGIN_MCP_INVALID"}}


def test_header_names_invalid_and_duplicate() -> None:
    messages = [f.message for f in check_plugin(FIXTURES / "bad-mcp").findings if f.server == "headers"]
    assert len(messages) == 3
    assert any("'X-Twice' is given twice" in m for m in messages)  # json.loads alone keeps the last silently
    assert any("'Bad Name' is not an HTTP field name" in m for m in messages)
    assert any("'X-Key' and 'x-key' are the same field" in m for m in messages)


@pytest.mark.parametrize(("host", "loopback"), [
    ("localhost", True), ("127.0.0.1", True), ("127.255.0.9", True), ("::1", True),
    ("localhost.example.invalid", False), ("0.0.0.0", False), ("::ffff:127.0.0.1", False), ("128.0.0.1", False),
    ("127.1", False), ("mylocalhost", False)])
def test_loopback_is_exactly_localhost_127_8_and_ipv6_one(host: str, loopback: bool) -> None:
    assert is_loopback(host) is loopback


def test_skill_md_outside_the_layout() -> None:
    result = check_plugin(FIXTURES / "skills-layout")
    assert sorted(f.file for f in result.findings) == ["docs/SKILL.md", "skills/SKILL.md", "skills/a/b/SKILL.md"]
    assert {f.rule_id for f in result.findings} == {"PLUGIN_SKILL_LAYOUT"} and result.skills == 1


def _symlinked(tmp_path: Path) -> Path:
    plugin = tmp_path / "plugin"
    shutil.copytree(FIXTURES / "no-mcp", plugin)
    outside = tmp_path / "outside"
    (outside / "skill").mkdir(parents=True)
    (outside / "tool").write_text("#!/bin/sh\n")
    (outside / "skill" / "SKILL.md").write_text("---\nname: x\ndescription: y\n---\n")
    os.symlink(outside, plugin / "linked")
    os.symlink(outside / "tool", plugin / "tool")
    (plugin / "skills").mkdir()
    os.symlink(outside / "skill", plugin / "skills" / "borrowed")
    (plugin / "inside").mkdir()
    os.symlink(plugin / "inside", plugin / "alias")
    mcp = {"$schema": "https://agent-plugins.org/schemas/1.0.0/mcp.schema.json", "mcpServers": {
        "cmd": {"type": "stdio", "command": "./tool"},
        "cwd": {"type": "stdio", "command": "npx", "cwd": "./linked"},
        "rooted": {"type": "stdio", "command": "npx", "cwd": "${PLUGIN_ROOT}/linked/skill"},
        "fine": {"type": "stdio", "command": "npx", "cwd": "./alias"}}}
    (plugin / "mcp.json").write_text(json.dumps(mcp, indent=2))
    return plugin


def test_a_symlink_out_of_the_plugin_is_an_escape(tmp_path: Path) -> None:
    """The text of each path stays inside; where it resolves does not (mcp-vet reads the text only). A symlink to a
    folder inside the plugin is fine."""
    result = check_plugin(_symlinked(tmp_path))
    assert _by_server(result) == {"cmd": {"PLUGIN_MCP_INVALID"}, "cwd": {"PLUGIN_CWD_ESCAPE"},
                                  "rooted": {"PLUGIN_CWD_ESCAPE"}, "skills/borrowed/SKILL.md": {"PLUGIN_SKILL_LAYOUT"}}
    assert result.skills == 0


def test_json_and_sarif_carry_tier_and_section() -> None:
    result = check_plugin(FIXTURES / "bad-manifest")
    document = as_json(result)
    assert document["failing"] is True
    assert {(f["rule"], f["tier"], f["section"]) for f in document["findings"]} >= {
        ("PLUGIN_MANIFEST_INVALID", "FATAL", "5.5"), ("PLUGIN_UNKNOWN_FIELD", "TOLERATED", "5.2")}
    sarif = to_sarif(result)
    results = sarif["runs"][0]["results"]
    assert len(results) == len(result.findings)
    assert {r["properties"]["section"] for r in results} == {"5.2", "5.4", "5.5", "8.1"}


def test_the_plugin_command(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                            capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = run_main(monkeypatch, capsys, "plugin", FIXTURES / "clean")
    assert (code, out.splitlines()[-1]) == (0, "envelope: no finding")
    code, _, _ = run_main(monkeypatch, capsys, "plugin", FIXTURES / "skills-layout")
    assert code == 0  # DEPRECATED only: the plugin loads
    code, out, err = run_main(monkeypatch, capsys, "plugin", FIXTURES / "bad-mcp", "--json", "-",
                              "--sarif", tmp_path / "e.sarif")
    assert code == 1 and json.loads(out)["failing"] is True and "PLUGIN_SSE_TRANSPORT" in err
    assert json.loads((tmp_path / "e.sarif").read_text())["version"] == "2.1.0"
    code, _, err = run_main(monkeypatch, capsys, "plugin", tmp_path / "nowhere")
    assert code == 2 and err.startswith("error: ") and len(err.strip().splitlines()) == 1


def test_sarif_locations_are_relative_to_the_checkout_not_the_plugin_folder(monkeypatch: pytest.MonkeyPatch) -> None:
    """Code scanning resolves %SRCROOT% at the repository root: `mcp.json` alone named a file there, not the
    plugin's."""
    monkeypatch.chdir(FIXTURES.parent.parent.parent)
    uris = {r["locations"][0]["physicalLocation"]["artifactLocation"]["uri"]
            for r in to_sarif(check_plugin(FIXTURES / "bad-mcp"))["runs"][0]["results"]}
    assert uris == {"tests/fixtures/plugins/bad-mcp/mcp.json"}
    monkeypatch.chdir(FIXTURES / "bad-mcp")
    assert {r["locations"][0]["physicalLocation"]["artifactLocation"]["uri"] for r in
            to_sarif(check_plugin(Path(".")))["runs"][0]["results"]} == {"mcp.json"}
