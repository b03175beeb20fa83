"""`scan --url` / `lock --url`: remote Streamable HTTP servers of our own on loopback (tests/servers/remote_http.py,
each in a subprocess on a free port): the URL never shown, an echoed secret redacted, writes not called without
--allow-writes, a redirect to another origin refused, proxy variables ignored over http://, and the refusals."""

from __future__ import annotations

import hashlib
import json
import os
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from scanner.errors import UsageError
from scanner.pipeline.remote_target import config_remote, is_loopback, parse_remote, redact

SERVER = Path(__file__).parent / "servers" / "remote_http.py"
SECRET = "tok-5f1e9a77c3"


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def _serve(*args: str) -> tuple[subprocess.Popen[bytes], int]:
    port = _free_port()
    process = subprocess.Popen([sys.executable, str(SERVER), args[0], str(port), *args[1:]],
                               stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline:
        try:
            socket.create_connection(("127.0.0.1", port), timeout=0.5).close()
            return process, port
        except OSError:
            time.sleep(0.1)
    process.kill()
    raise RuntimeError("the test server did not listen")


@pytest.fixture
def server(tmp_path: Path) -> Iterator[tuple[int, Path]]:
    writes = tmp_path / "writes.txt"
    process, port = _serve("mcp", str(writes))
    yield port, writes
    process.terminate()
    process.wait(10)


def _cli(args: list[str], tmp_path: Path, **env: str) -> subprocess.CompletedProcess[str]:
    environ = {**os.environ, "PYTHONPATH": str(Path(__file__).parent.parent), "SECRET_TOKEN": SECRET, **env}
    code = "import sys\nfrom scanner.cli.app import main\nsys.argv = ['mcp-sandbox', *sys.argv[1:]]\nmain()"
    return subprocess.run([sys.executable, "-c", code, *args], capture_output=True, text=True, timeout=180,
                          env=environ, cwd=tmp_path)


def test_an_echoed_secret_is_redacted_and_the_url_never_shown(server: tuple[int, Path], tmp_path: Path) -> None:
    port, _ = server
    url = f"http://127.0.0.1:{port}/mcp?team=q7secretquery"
    result = _cli(["scan", "--url", url, "--header-env", "X-Api-Key=SECRET_TOKEN", "--header", "X-Team: blue",
                   "--include-responses", "--json", "r.json", "--markdown", "r.md"], tmp_path)
    assert result.returncode == 0, result.stderr[-2000:]
    written = [result.stdout, result.stderr, (tmp_path / "r.json").read_text(), (tmp_path / "r.md").read_text()]
    for text in written:
        assert SECRET not in text
        assert "q7secretquery" not in text and f"{port}/mcp" not in text
    report = json.loads(written[2])
    remote = report["target"]["remote"]
    assert report["target"]["kind"] == "remote" and report["target"]["requested"] == f"http://127.0.0.1:{port}"
    assert remote["sandboxed"] is False and remote["secret_headers"] == ["X-Api-Key"]
    assert remote["endpoint_sha256"] == hashlib.sha256(f"http\n127.0.0.1\n{port}\n/mcp".encode()).hexdigest()
    echoed = next(p for p in report["probes"] if p["tool"] == "echo_headers")
    assert "x-api-key: [redacted]" in echoed["response"] and "x-team: blue" in echoed["response"]
    assert remote["secrets_echoed"] >= 1 and remote["secrets_in_definitions"] is False
    skipped = {s["stage"]: s["reason"] for s in report["skipped"]}
    assert skipped["behavior"].startswith("not available: remote") and skipped["run"].startswith("NOT sandboxed")
    assert "NOT sandboxed" in result.stderr and "NOT sandboxed" in written[3]


def test_a_write_tool_is_called_only_with_allow_writes(server: tuple[int, Path], tmp_path: Path) -> None:
    port, writes = server
    url = f"http://127.0.0.1:{port}/mcp"
    result = _cli(["scan", "--url", url, "--json", "r.json"], tmp_path)
    assert result.returncode == 0, result.stderr[-2000:]
    assert not writes.exists()
    probes = json.loads((tmp_path / "r.json").read_text())["probes"]
    assert [p["status"] for p in probes if p["tool"] == "delete_records"] == ["not_probed"]
    assert any(p["error_probe"] for p in probes if p["tool"] == "lookup")
    result = _cli(["scan", "--url", url, "--allow-writes", "--json", "r.json"], tmp_path)
    assert result.returncode == 0, result.stderr[-2000:]
    assert writes.read_text().startswith("deleted")
    probes = json.loads((tmp_path / "r.json").read_text())["probes"]
    written = [p for p in probes if p["tool"] == "delete_records"]
    assert written and not any(p["error_probe"] for p in written)  # error probes only on read-only tools


def test_a_redirect_to_another_origin_is_not_followed(server: tuple[int, Path], tmp_path: Path) -> None:
    port, _ = server
    redirect, redirect_port = _serve("redirect", f"http://localhost:{port}/mcp")
    try:
        result = _cli(["scan", "--url", f"http://127.0.0.1:{redirect_port}/mcp", "--json", "r.json"], tmp_path)
    finally:
        redirect.terminate()
        redirect.wait(10)
    assert result.returncode == 3
    report = json.loads((tmp_path / "r.json").read_text())
    assert report["tools"] == [] and any("not followed" in error for error in report["errors"])


def test_plain_http_ignores_the_proxy_variables(server: tuple[int, Path], tmp_path: Path) -> None:
    port, _ = server
    dead = f"http://127.0.0.1:{_free_port()}"
    result = _cli(["scan", "--url", f"http://127.0.0.1:{port}/mcp", "--no-probes", "--json", "r.json"], tmp_path,
                  HTTP_PROXY=dead, http_proxy=dead, ALL_PROXY=dead, NO_PROXY="", no_proxy="")
    assert result.returncode == 0, result.stderr[-2000:]
    assert len(json.loads((tmp_path / "r.json").read_text())["tools"]) == 3


def test_lock_and_check_take_url(server: tuple[int, Path], tmp_path: Path) -> None:
    port, _ = server
    url = f"http://127.0.0.1:{port}/mcp"
    assert _cli(["lock", "--url", url, "--lock", "m.lock"], tmp_path).returncode == 0
    text = (tmp_path / "m.lock").read_text()
    assert f"{port}/mcp" not in text and '"kind": "remote"' in text and '"endpoint_sha256": "' in text
    checked = _cli(["lock", "--check", "--url", url, "--lock", "m.lock"], tmp_path)
    assert checked.returncode == 0 and "no changes" in checked.stdout


@pytest.mark.parametrize(("args", "says"), [
    (["--url", "http://mcp.example.invalid/mcp", "--header-env", "X-Key=SECRET_TOKEN"], "https://"),
    (["--url", "https://mcp.example.invalid/mcp", "--header", "no colon here"], "'NAME: VALUE'"),
    (["npm:some-server", "--url", "https://mcp.example.invalid/mcp"], "drop the TARGET"),
    (["--header", "X-Team: blue"], "give --url URL too"),
    (["--url", "ftp://mcp.example.invalid/mcp"], "http:// or https://"),
    (["--url", "http://[::1/mcp.example.invalid/mcp"], "not a valid URL"),  # was an internal error (urllib)
    (["--url", "https://\u2603..mcp.example.invalid/mcp"], "not a valid URL"),  # was one at the first request (IDNA)
    (["--url", "https://[v1.mcp.example.invalid/mcp]/mcp"], "not a valid URL"),
])
def test_refusals_are_one_line_and_exit_2(args: list[str], says: str, tmp_path: Path) -> None:
    result = _cli(["scan", *args], tmp_path)
    assert result.returncode == 2
    lines = [line for line in result.stderr.splitlines() if line.strip()]
    assert len(lines) == 1 and lines[0].startswith("error: ") and says in lines[0]
    assert "mcp.example.invalid/mcp" not in result.stderr and SECRET not in result.stderr


def test_loopback_is_exactly_localhost_127_and_ipv6_one() -> None:
    assert all(is_loopback(h) for h in ("localhost", "127.0.0.1", "127.9.8.7", "::1"))
    assert not any(is_loopback(h) for h in ("localhost.example.invalid", "10.0.0.1", "0.0.0.0", "::2"))
    assert parse_remote("http://[::1]:9/mcp", [], ["X-Key=V"], {"V": "s"}).origin() == "http://[::1]:9"
    with pytest.raises(UsageError):
        parse_remote("http://127.0.0.1.example.invalid/mcp", [], ["X-Key=V"], {"V": "s"})


@pytest.mark.parametrize("value", ["Jos\u00e9", "a\x00b", "a\x1bb", "del\x7f"])
def test_a_header_value_that_http_cannot_carry_is_refused_not_an_internal_error(value: str) -> None:
    """httpx sends header values as ASCII: a non-ASCII or control character was an internal error at the first
    request (and ended a config's whole run); it is a one-line refusal before anything is sent."""
    with pytest.raises(UsageError, match="printable ASCII"):
        parse_remote("https://h.example.invalid/mcp", [f"X-User: {value}"], [], {})
    with pytest.raises(UsageError, match="printable ASCII"):
        parse_remote("https://h.example.invalid/mcp", [], ["X-Key=V"], {"V": value})
    with pytest.raises(UsageError, match="printable ASCII"):
        config_remote("https://h.example.invalid/mcp", {"X-Key": value})
    assert parse_remote("https://h.example.invalid/mcp", ["X-A: a\tb c"], [], {}).headers == {"X-A": "a\tb c"}


def test_redact_replaces_raw_and_json_escaped_secrets_and_the_url() -> None:
    remote = parse_remote("https://h.example.invalid/p?k=1", [], ["X-Key=V"], {"V": 'a"b'})
    text, found = redact(json.dumps({"x": 'a"b', "u": "https://h.example.invalid/p?k=1"}), remote)
    assert found == 1 and 'a\\"b' not in text and "?k=1" not in text and "[redacted]" in text


def test_a_secret_in_the_definitions_refuses_the_lock() -> None:
    from scanner.cli.remote_scan import lockable
    from scanner.report.model import RemoteInfo, Report, TargetInfo

    remote = RemoteInfo(scheme="https", host="h.example.invalid", endpoint_sha256="0" * 64, secrets_echoed=1,
                        secrets_in_definitions=True)
    report = Report(target=TargetInfo(kind="remote", name="h.example.invalid", requested="https://h.example.invalid",
                                      remote=remote))
    with pytest.raises(UsageError, match="no lock is written"):
        lockable(report)
    assert lockable(report.model_copy(update={"target": report.target.model_copy(update={
        "remote": remote.model_copy(update={"secrets_in_definitions": False})})}))


@pytest.mark.parametrize("value", ["remote", "1", "true"])
def test_a_secret_that_is_one_of_the_reports_own_words_is_not_an_internal_error(value: str, server: tuple[int, Path],
                                                                               tmp_path: Path) -> None:
    """Redaction replaced the value in the report's JSON text, structure and all ("kind": "[redacted]", a number
    made [redacted]), and reading it back was an internal error: the string values are redacted instead."""
    port, _ = server
    result = _cli(["scan", "--url", f"http://127.0.0.1:{port}/mcp", "--header-env", "X-Mode=MODE", "--no-probes",
                   "--json", "r.json"], tmp_path, MODE=value)
    assert result.returncode == 0, result.stderr[-2000:]
    report = json.loads((tmp_path / "r.json").read_text())
    assert report["target"]["kind"] == "remote" and len(report["tools"]) == 3


def test_a_url_holding_the_secret_is_still_redacted_whole() -> None:
    """The secret was replaced first, so a URL whose query held it no longer matched and its path was shown."""
    remote = parse_remote("https://h.example.invalid/p7path?key=tok-5f1e9a77c3", [], ["X-Key=V"], {"V": SECRET})
    text, _ = redact("POST https://h.example.invalid/p7path?key=tok-5f1e9a77c3 failed", remote)
    assert text == "POST https://h.example.invalid/[redacted] failed"
