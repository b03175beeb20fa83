"""`scan --url` against hostile servers of our own on loopback (tests/servers/hostile_http.py): a secret the server
puts in a tool's name stays off the terminal's progress line, a tool named twice (read-only and destructive) is not
called without --allow-writes, and a huge response body is cut, not held in memory (in process, and by the whole
scan's own peak)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import Iterator
from typing import Any
from pathlib import Path

import pytest

from tests.loopback_server import start_loopback_server
from scanner.pipeline.remote_target import REDACTED
from tests.test_remote_scan import SECRET

ROOT = Path(__file__).parent.parent
SERVER = ROOT / "tests" / "servers" / "hostile_http.py"
# The CLI in a child that writes its own peak resident set size (VmHWM, KiB) to `rss` as it exits. Not getrusage's
# ru_maxrss: Linux carries the parent's peak across fork and exec into it, so inside a long pytest run it read
# pytest's own size (673 MB once), not the scan's.
CODE = ("import atexit, sys\nfrom scanner.cli.app import main\n"
        "def peak():\n"
        "    line = next(l for l in open('/proc/self/status') if l.startswith('VmHWM:'))\n"
        "    open('rss', 'w').write(line.split()[1])\n"
        "atexit.register(peak)\nsys.argv = ['mcp-sandbox', *sys.argv[1:]]\nmain()")


@pytest.fixture
def hostile(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[tuple[int, Path]]:
    log = tmp_path / "calls.log"
    process, port = start_loopback_server(SERVER, request.param, log)
    yield port, log
    process.kill()
    process.wait(10)


def _scan(port: int, tmp_path: Path, *extra: str, **env: str) -> subprocess.CompletedProcess[str]:
    args = ["scan", "--url", f"http://127.0.0.1:{port}/mcp", "--header-env", "X-Api-Key=SECRET_TOKEN",
            "--json", "r.json", *extra]
    return subprocess.run([sys.executable, "-c", CODE, *args], capture_output=True, text=True, timeout=180,
                          env={**os.environ, "PYTHONPATH": str(ROOT), "SECRET_TOKEN": SECRET, **env}, cwd=tmp_path)


@pytest.mark.parametrize("hostile", ["secret-name"], indirect=True)
def test_a_secret_in_a_tool_name_stays_off_the_progress_line(hostile: tuple[int, Path], tmp_path: Path) -> None:
    port, log = hostile
    result = _scan(port, tmp_path, FORCE_COLOR="1")  # rich draws the spinner as on a terminal
    assert log.read_text().strip() == f"peek-{SECRET}"  # the tool was probed, its progress line shown
    assert "probing peek-" in result.stderr
    assert SECRET not in result.stderr and SECRET not in result.stdout


@pytest.mark.parametrize("hostile", ["twin"], indirect=True)
def test_a_tool_named_twice_read_only_and_destructive_is_not_called(hostile: tuple[int, Path],
                                                                      tmp_path: Path) -> None:
    port, log = hostile
    _scan(port, tmp_path)
    assert not log.exists() or log.read_text() == ""
    report = json.loads((tmp_path / "r.json").read_text())
    assert all(probe["status"] == "not_probed" for probe in report["probes"] if probe["tool"] == "purge")


def test_a_response_body_is_cut_at_the_bound_and_left_undecoded() -> None:
    """The scan's HTTP client (scanner/pipeline/remote.py `http_client`) cuts each response body at the bound with
    a ReadError, reading no further: a 512 MiB answer is never held whole (deterministic, in process)."""
    import anyio
    import httpx2

    from scanner.pipeline.remote_body import IDENTITY, MAX_RESPONSE_BYTES, capper

    sent: list[int] = []

    async def endless() -> Any:
        for _ in range(8192):  # 512 MiB in 64 KiB chunks, made as they are asked for
            sent.append(65536)
            yield b" " * 65536

    def answer(request: httpx2.Request) -> httpx2.Response:
        assert request.headers["accept-encoding"] == "identity"
        return httpx2.Response(200, headers={"content-encoding": "gzip"}, content=endless())

    async def read() -> None:
        async with httpx2.AsyncClient(transport=httpx2.MockTransport(answer), headers=IDENTITY,
                                      event_hooks={"response": [capper()]}) as client:
            with pytest.raises(httpx2.ReadError, match="passed"):
                await client.post("http://127.0.0.1:9/mcp", content=b"{}")

    anyio.run(read)
    assert MAX_RESPONSE_BYTES <= sum(sent) <= MAX_RESPONSE_BYTES + 65536  # read to the bound, not one chunk more


@pytest.mark.parametrize("hostile", ["huge"], indirect=True)
def test_a_whole_scan_against_a_huge_body_stays_small(hostile: tuple[int, Path], tmp_path: Path) -> None:
    """The whole scan process against a server whose tools/list is a 512 MiB body: its own peak stays far under it."""
    port, _ = hostile
    result = _scan(port, tmp_path, "--startup-timeout", "60")
    assert result.returncode != 0 and "Traceback" not in result.stderr  # the listing failed, said so, no crash
    assert int((tmp_path / "rss").read_text()) < 200 * 1024  # KiB: the body was cut at 32 MiB, never held whole


@pytest.mark.parametrize("hostile", ["redirect-secret", "json-lie"], indirect=True)
def test_what_the_sdk_logs_of_a_failed_listing_stays_off_the_terminal(hostile: tuple[int, Path],
                                                                      tmp_path: Path) -> None:
    """The SDK logs an unfollowed redirect's Location (here echoing the secret header) and an unparsable body (with
    a traceback) to stderr when no logging is set up: they were printed as they came, unredacted and unescaped.
    The failure is the report's (redacted) error, the scan incomplete."""
    port, _ = hostile
    result = _scan(port, tmp_path)
    assert result.returncode == 3
    assert SECRET not in result.stderr and "Traceback" not in result.stderr
    assert "Error parsing" not in result.stderr
    report = json.loads((tmp_path / "r.json").read_text())
    assert report["tools"] == [] and report["errors"] and SECRET not in json.dumps(report)


@pytest.mark.parametrize("hostile", ["read-only-destructive"], indirect=True)
def test_a_tool_annotated_read_only_and_destructive_is_not_called(hostile: tuple[int, Path], tmp_path: Path) -> None:
    """readOnlyHint: true with destructiveHint: true contradicts itself: the tool was called as read-only on the
    live service; it is a write now (called only with --allow-writes)."""
    port, log = hostile
    _scan(port, tmp_path)
    assert not log.exists() or log.read_text() == ""
    probes = json.loads((tmp_path / "r.json").read_text())["probes"]
    assert [probe["status"] for probe in probes if probe["tool"] == "wipe"] == ["not_probed"]
    _scan(port, tmp_path, "--allow-writes")
    assert log.read_text().splitlines() == ["wipe"]


@pytest.mark.parametrize(("hostile", "says"), [
    ("listing-401", "listing tools: the server answered with error -32603: Server returned an error response "
                    "(HTTP 401 Unauthorized: the server wants credentials"),
    ("call-429", "probing: 1 tool call(s) were answered with an HTTP error instead of MCP (HTTP 429 Too Many "
                 "Requests"),
], indirect=["hostile"])
def test_a_bare_http_error_status_is_named_and_leaves_the_scan_incomplete(hostile: tuple[int, Path], says: str,
                                                                          tmp_path: Path) -> None:
    """The SDK answers a 4xx/5xx without a JSON-RPC body with a stand-in that loses the status: a refused token read
    as a server bug, and a rate-limited tool call as the tool's own answer, in a scan that said complete (exit 0/1)."""
    port, _ = hostile
    result = _scan(port, tmp_path)
    assert result.returncode == 3 and "Traceback" not in result.stderr
    report = json.loads((tmp_path / "r.json").read_text())
    assert report["status"] != "complete" and any(error.startswith(says) for error in report["errors"])


@pytest.mark.parametrize("hostile", ["long-error"], indirect=True)
def test_a_secret_cut_short_by_a_cap_is_still_redacted(hostile: tuple[int, Path], tmp_path: Path) -> None:
    """An error message is cut at 300 characters before the report is redacted: a secret straddling the cut was no
    longer found whole, and its first characters were printed and written to every report."""
    port, _ = hostile
    result = _scan(port, tmp_path, "--sarif", "r.sarif", "--markdown", "r.md")
    assert result.returncode == 3
    written = [result.stdout, result.stderr, *((tmp_path / name).read_text() for name in ("r.json", "r.sarif", "r.md"))]
    assert all(SECRET[:8] not in text for text in written)
    assert any("x" * 200 + REDACTED in error for error in json.loads(written[2])["errors"])


def test_redact_replaces_a_secret_cut_short_and_keeps_the_json_whole() -> None:
    from scanner.pipeline.remote_target import parse_remote, redact

    remote = parse_remote("https://h.example.invalid/mcp", [], ["X-Key=V"], {"V": "Bearer tok-5f1e9a77c3"})
    text = json.dumps({"a": "said Bearer tok-5f1e9", "b": "said Bearer ", "c": "\\Bearer tok-5f1e"})
    clean, found = redact(text, remote)
    assert found == 0 and json.loads(clean) == {"a": f"said {REDACTED}", "b": "said Bearer ",
                                                 "c": "\\Bearer tok-5f1e"}
    assert redact("probing Bearer tok-5f1e9a77c3 and Bearer tok-5", remote)[0] == f"probing {REDACTED} and {REDACTED}"


@pytest.mark.parametrize("hostile", ["rug-pull"], indirect=True)
def test_a_definition_changed_after_the_calls_is_p8(hostile: tuple[int, Path], tmp_path: Path) -> None:
    """The remote probes never listed the tools again, so a server that swapped a tool's description once it was
    called (a rug pull) passed: P8 went unchecked without the scan saying so."""
    port, _ = hostile
    result = _scan(port, tmp_path)
    report = json.loads((tmp_path / "r.json").read_text())
    assert [f["rule_id"] for f in report["findings"] if f["tool"] == "look"].count("P8") >= 1, result.stderr[-2000:]
    assert result.returncode == 1
