"""`mcp-sandbox check-config`: client config formats, output, exit codes, and no secret ever in the output."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from typer.testing import CliRunner

from scanner.cli.app import app
from scanner.provenance.client_config import read_client_config, strip_jsonc

CONFIGS = Path(__file__).parent / "fixtures" / "provenance" / "configs"
ALL = [CONFIGS / "claude_desktop_config.json", CONFIGS / "claude.json", CONFIGS / ".cursor" / "mcp.json",
       CONFIGS / ".vscode" / "mcp.json"]
SECRETS = ["pm-secret-value-do-not-print", "alice", "hunter2", "sk-query-secret", "header-secret", "api_key",
           "/v1/mcp", "sk-arg-secret", "ghp_cursor_secret", "cursor-query-secret", "token="]
REPO = Path(__file__).parents[1]


def run(*args: str) -> subprocess.CompletedProcess[str]:
    """The real entry point, as a user runs it (UsageError → exit 2 is handled in scanner.cli.main)."""
    env = dict(os.environ, PYTHONPATH=str(REPO), COLUMNS="200")
    return subprocess.run([sys.executable, "-c", "from scanner.cli.app import main; main()", *args],
                          capture_output=True, text=True, env=env, timeout=60)


def test_formats_are_recognised() -> None:
    formats = {p.name if p.parent == CONFIGS else p.parent.name: read_client_config(p).format for p in ALL}
    assert formats == {"claude_desktop_config.json": "claude-desktop", "claude.json": "claude-code",
                       ".cursor": "cursor", ".vscode": "vscode"}


def test_claude_code_project_servers_are_read() -> None:
    config = read_client_config(CONFIGS / "claude.json")
    assert {(s.name, s.scope) for s in config.servers} == {
        ("remote-api", None), ("typo", "/home/someone/project-a"), ("broken", "/home/someone/project-a"),
        ("shell", "/home/someone/project-b")}


def test_terminal_output_and_exit_code() -> None:
    result = run("check-config", *map(str, ALL))
    assert result.returncode == 1, result.stderr
    out = result.stdout
    assert "error I8 known-bad-release" in out and "postmark-mcp@1.0.16" in out
    assert "warning I9 possible-typosquat" in out
    assert "cannot be parsed" in out
    assert "Unreadable server entry" in out
    assert "https://mcp.example.invalid:8443" in out
    assert "env: POSTMARK_SERVER_TOKEN (values not shown)" in out
    for secret in SECRETS:
        assert secret not in out and secret not in result.stderr, secret


def test_json_output_and_no_secrets() -> None:
    result = run("check-config", "--json", "-", *map(str, ALL))
    doc = json.loads(result.stdout)
    assert doc["summary"]["servers"] == 11
    assert doc["summary"]["findings"]["error"] == 2
    servers = {s["name"]: s for f in doc["files"] for s in f["servers"]}
    assert servers["remote-api"]["remote"] == "https://mcp.example.invalid:8443"
    assert servers["remote"]["remote"] == "https://mcp.example.invalid"
    assert servers["postmark"]["env_names"] == ["POSTMARK_SERVER_TOKEN"]
    assert [f["rule_id"] for f in servers["litellm"]["findings"]] == ["I1", "I1", "I8"]
    assert servers["pinned-image"]["findings"] == [] and servers["git"]["findings"] == []
    for secret in SECRETS:
        assert secret not in result.stdout, secret


@pytest.mark.parametrize("flags, code", [
    ([], 0), (["--fail-on", "warning"], 1), (["--fail-on", "info"], 1), (["--fail-on", "never"], 0)])
def test_fail_on(flags: list[str], code: int) -> None:
    result = CliRunner().invoke(app, ["check-config", *flags, str(CONFIGS / "claude.json")])
    assert result.exit_code == code, result.output  # claude.json has warnings only


def test_min_severity_filters_the_terminal_not_the_report_nor_the_exit_code(tmp_path: Path) -> None:
    out = tmp_path / "out.json"
    result = CliRunner().invoke(app, ["check-config", "--json", str(out), "--min-severity", "error",
                                      str(CONFIGS / "claude_desktop_config.json")])
    shown = [line.split()[:2] for line in result.stdout.splitlines() if line.startswith("    ")]
    assert shown == [["error", "I8"]]
    doc = json.loads(out.read_text())
    every = [f["severity"] for s in doc["files"][0]["servers"] for f in s["findings"]]
    assert "error" in every and set(every) - {"error"}  # the report file holds every finding
    assert result.exit_code == 1


@pytest.mark.parametrize("args, message", [
    (["check-config", str(CONFIGS / "missing.json")], "no such file"),
    (["check-config", str(CONFIGS)], "not a regular file"),
    (["check-config", "/dev/zero"], "not a regular file"),
    (["check-config", str(CONFIGS / "claude.utf16.json")], "not UTF-8 (byte 0); save it as UTF-8"),
    (["check-config", str(CONFIGS / "broken.json")], "not valid JSON"),
    (["check-config", str(CONFIGS / "not_mcp.json")], "no MCP servers found"),
    (["check-config", "--fail-on", "bogus", str(CONFIGS / "claude.json")], "--fail-on"),
    (["check-config", "--min-severity", "loud", str(CONFIGS / "claude.json")], "--min-severity"),
])
def test_bad_input_is_exit_2_with_one_error_line(args: list[str], message: str) -> None:
    """A folder or a device was "no such file"; a UTF-16 file (PowerShell's `>`) named an exception class, not
    what to do."""
    result = run(*args)
    assert result.returncode == 2
    assert result.stderr.startswith("error: ") and message in result.stderr
    assert "Traceback" not in result.stderr


def test_jsonc_comments_and_trailing_commas() -> None:
    text = '{"a": "x // not a comment", /* c */ "b": [1, 2,], // end\n}'
    assert json.loads(strip_jsonc(text)) == {"a": "x // not a comment", "b": [1, 2]}


def test_terminal_output_escapes_control_characters(tmp_path: Path) -> None:
    path = tmp_path / "mcp.json"
    path.write_text(json.dumps({"mcpServers": {"evil\x1b[31mname": {"command": "npx", "args": ["x-srv\x1b]0;"]}}}))
    result = run("check-config", str(path))
    assert "\x1b" not in result.stdout
    assert "evil\\e[31mname" in result.stdout


def test_report_strings_from_the_config_are_capped(tmp_path: Path) -> None:
    """A server name, package spec or variable name of megabytes was copied whole into the JSON report (and the
    finding's message and evidence: three copies of a 1 MB package name); each is capped as a scan report's are."""
    from sandbox.core.untrusted import MAX_STRING_CHARS

    config = tmp_path / "mcp.json"
    config.write_text(json.dumps({"mcpServers": {
        "N" * 2_000_000: {"command": "npx", "args": ["-y", "p" * 1_000_000]},
        "e": {"command": "npx", "args": ["-y", "q@1.0.0"], "env": {"E" * 1_000_000: "v"}}}}))
    out = tmp_path / "out.json"
    result = run("check-config", str(config), "--json", str(out), "-q")
    assert result.returncode == 0, result.stderr
    assert out.stat().st_size < 200_000

    def strings(value: object) -> list[str]:
        if isinstance(value, dict):
            return [s for v in value.values() for s in strings(v)]
        if isinstance(value, list):
            return [s for v in value for s in strings(v)]
        return [value] if isinstance(value, str) else []

    assert max(map(len, strings(json.loads(out.read_text())))) <= MAX_STRING_CHARS + 100
