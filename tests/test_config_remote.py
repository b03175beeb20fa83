"""Issue 14 §2/§5: a client config's remote entries go through the `--url` door (a loopback Streamable HTTP server
of our own, tests/servers/remote_http.py, as the remote tests run it): scanned NOT sandboxed, a row of the table
each, their headers sent only with --pass-config-env and only as secrets (named, never printed; echoed ones
[redacted]), and a config whose entries all scanned clean exits 0."""

from __future__ import annotations

import json
from pathlib import Path

from tests.test_remote_scan import SECRET, _cli, server  # noqa: F401 - the loopback server fixture

__all__ = ["server"]


def _config(tmp_path: Path, port: int) -> Path:
    path = tmp_path / ".mcp.json"
    path.write_text(json.dumps({"mcpServers": {
        "api": {"type": "http", "url": f"http://127.0.0.1:{port}/mcp?k=q7secretquery",
                "headers": {"X-Api-Key": SECRET}},
        "events": {"type": "sse", "url": f"http://127.0.0.1:{port}/sse"}}}))
    return path


def test_a_remote_config_entry_is_scanned_as_url_with_its_headers_only_when_asked(server, tmp_path: Path) -> None:
    port, writes = server
    path = _config(tmp_path, port)
    result = _cli(["scan", "--config-file", str(path), "--pass-config-env", "--include-responses", "--json", "r.json",
                   "--server", "api"], tmp_path)
    assert result.returncode == 0, result.stderr[-2000:]  # a remote entry no longer makes the run incomplete
    text = (tmp_path / "r.json").read_text()
    for shown in (result.stdout, result.stderr, text):
        assert SECRET not in shown and "q7secretquery" not in shown and f"{port}/mcp" not in shown
    [entry] = json.loads(text)["servers"]
    assert (entry["status"], entry["transport"], entry["sandboxed"]) == ("scanned", "streamable-http", False)
    assert entry["target"] == f"http://127.0.0.1:{port}" and entry["headers_passed"] == ["X-Api-Key"]
    report = entry["report"]
    assert report["target"]["remote"]["secret_headers"] == ["X-Api-Key"] and report["tools"]
    echoed = next(p for p in report["probes"] if p["tool"] == "echo_headers")
    assert "x-api-key: [redacted]" in echoed["response"]
    assert not writes.exists()  # the write tool was not called: no --allow-writes
    assert "NOT sandboxed" in result.stdout and "(not sandboxed)" in result.stdout


def test_without_pass_config_env_the_headers_are_named_not_sent(server, tmp_path: Path) -> None:
    port, _ = server
    result = _cli(["scan", "--config-file", str(_config(tmp_path, port)), "--include-responses", "--json", "r.json"],
                  tmp_path)
    assert result.returncode == 3, result.stderr[-2000:]  # the SSE entry was not scanned, and says why
    servers = {s["name"]: s for s in json.loads((tmp_path / "r.json").read_text())["servers"]}
    api = servers["api"]
    assert api["status"] == "scanned" and (api["headers_passed"], api["headers_not_passed"]) == ([], ["X-Api-Key"])
    echoed = next(p for p in api["report"]["probes"] if p["tool"] == "echo_headers")
    assert "x-api-key" not in echoed["response"]
    assert servers["events"]["reason"].startswith("SSE transport")
    assert "headers not passed: X-Api-Key (--pass-config-env passes them)" in result.stdout
    assert result.stderr.strip().splitlines()[-1].startswith("exit 3: 2 server(s); worst: events: not scanned: SSE transport")
