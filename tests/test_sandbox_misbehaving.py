"""Servers that misbehave end the scan with a clear error, never a hang or a crash of the scanner."""

from __future__ import annotations

import io
import json

import pytest
from rich.console import Console

from scanner.pipeline.inventory import Timeouts
from scanner.report.terminal import render
from scanner.pipeline.scan import ScanOptions, run_scan
from tests.sandbox_helpers import ZOO, labelled_containers, run_cli

pytestmark = pytest.mark.docker


def scan_zoo(command: str, startup: float = 20.0):
    return run_scan(ScanOptions(target=str(ZOO), command=command, timeouts=Timeouts(startup=startup, request=10)))


def test_all_pages_of_tools_are_listed(no_leftovers):
    report = scan_zoo("zoo-paged")
    assert [t["name"] for t in report.tools] == [f"zoo_tool_{i:02d}" for i in range(25)]
    assert report.errors == []


def test_stdout_flood_ends_the_scan_with_a_reason(no_leftovers):
    report = scan_zoo("zoo-flood")
    assert any("flooded stdout" in e for e in report.errors), report.errors
    assert report.tools == []
    assert report.sandbox.teardown.complete


def test_a_50_mb_line_ends_the_scan_with_a_reason(no_leftovers):
    report = scan_zoo("zoo-bigline")
    assert any("line over 8 MiB" in e for e in report.errors), report.errors
    assert report.sandbox.teardown.complete


def test_a_server_that_never_answers_times_out(no_leftovers):
    report = scan_zoo("zoo-hang", startup=3)
    assert any("connecting" in e and ("did not answer" in e or "error" in e) for e in report.errors), report.errors
    assert report.sandbox.teardown.complete
    assert report.status == "incomplete" and report.verdict in ("incomplete", "block") and report.score is None
    assert [s.stage for s in report.skipped][:3] == ["listing", "lint", "probes"]


def test_a_crashing_server_is_reported_with_its_stderr(no_leftovers):
    report = scan_zoo("zoo-crash")
    assert report.sandbox.exit_code == 3
    assert "missing configuration ZOO_API_KEY" in report.sandbox.stderr
    assert any("exited with code 3" in e for e in report.errors), report.errors


def test_a_server_that_exits_at_start_is_incomplete_never_pass(tmp_path, no_leftovers):
    """It used to end `PASS 0 errors … score 100/100` with zero tools, exit 3 only by luck of the error list."""
    out = tmp_path / "report.json"
    result = run_cli("scan", str(ZOO), "--command", "zoo-crash", "--json", str(out))
    assert result.returncode == 3, result.stderr[-2000:]
    assert result.stderr.strip().splitlines()[-1] == (
        "exit 3: incomplete: listing skipped (the server exited with code 3 before the session started)")
    report = json.loads(out.read_text())
    assert report["status"] == "incomplete" and report["verdict"] == "incomplete"
    assert report["score"] is None and report["tools"] == []
    assert report["skipped"][0] == {"stage": "listing", "chosen": False,
                                    "reason": "the server exited with code 3 before the session started"}
    assert "INCOMPLETE" in result.stdout and "PASS" not in result.stdout and "100/100" not in result.stdout


def test_a_server_ignoring_eof_and_sigterm_is_torn_down(docker_client, no_leftovers):
    report = scan_zoo("zoo-stubborn")
    assert [t["name"] for t in report.tools] == ["echo_text"]
    teardown = report.sandbox.teardown
    assert teardown.complete and teardown.leftovers == []
    # Killed, not waited on: a graceful `docker stop` would take its 10 s grace period.
    assert teardown.seconds < 8
    assert labelled_containers(docker_client, report.sandbox.session) == []


def test_hostile_text_never_reaches_the_terminal_raw(no_leftovers):
    report = scan_zoo("zoo-hostile-text")
    assert "\x1b" in report.tools[0]["description"]  # kept as data in the report...
    buffer = io.StringIO()
    render(report, Console(file=buffer, width=200, color_system=None, force_terminal=False))
    shown = buffer.getvalue()
    for raw in ("\x1b", "\x07", "\r", "\u202e", "\U000e0072"):
        assert raw not in shown, repr(raw)  # ...but never shown raw
    assert "\\e" in shown or "\\x1b" in shown


def test_a_local_wheel_installs_and_runs(tmp_path, no_leftovers):
    import subprocess
    import sys

    subprocess.run([sys.executable, "-m", "pip", "wheel", "-q", "--no-deps", "-w",
                    str(tmp_path), str(ZOO)], check=True, capture_output=True)
    wheel = next(tmp_path.glob("mcp_zoo-*.whl"))
    report = run_scan(ScanOptions(target=str(wheel), command="zoo-plain"))
    assert report.target.kind == "archive" and report.target.version == "0.1.0"
    assert [t["name"] for t in report.tools] == ["echo_text"]
