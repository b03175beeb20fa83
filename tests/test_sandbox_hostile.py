"""Servers hostile by size cannot crash or hang the scan: few-MiB valid messages are read, listed and linted; a stdout
flood and a 30 MB result end with a report, the error recorded, teardown complete; run containers keep no log."""

from __future__ import annotations

import time

import pytest

from sandbox.run import server as run_server
from scanner.pipeline.inventory import Timeouts
from scanner.pipeline.scan import ScanOptions, run_scan
from scanner.probes.runner import ProbeOptions
from tests.sandbox_helpers import ZOO, run_cli

pytestmark = pytest.mark.docker

NO_PROBES = ProbeOptions(enabled=False)


def scan_zoo(command: str, probes: ProbeOptions = NO_PROBES):
    began = time.monotonic()
    report = run_scan(ScanOptions(target=str(ZOO), command=command, timeouts=Timeouts(startup=60, request=30),
                                  probes=probes))
    return report, time.monotonic() - began


def rule_ids(report) -> set[str]:
    return {f.rule_id for f in report.findings}


def assert_no_noise(report) -> None:
    assert not any("non-JSON-RPC" in e or "flooded stdout" in e or "not JSON" in e for e in report.errors), \
        report.errors


def test_3000_tools_in_one_message_are_listed_and_linted(no_leftovers):
    report, seconds = scan_zoo("zoo-many-tools")
    assert len(report.tools) == 3_000
    assert report.errors == []
    assert "S1" in rule_ids(report)
    short = {f.tool for f in report.findings if f.rule_id == "S1"}
    assert {"record_0000", "record_2990"} <= short
    assert report.sandbox.teardown.complete
    print(f"zoo-many-tools --no-probes: {seconds:.1f} s")


def test_a_schema_nested_100_levels_is_a_message_not_noise(no_leftovers):
    report, _ = scan_zoo("zoo-deep-schema")
    assert_no_noise(report)
    assert report.errors == []
    assert sorted(t["name"] for t in report.tools) == ["nested_config", "x"]
    assert {f.tool for f in report.findings if f.rule_id == "S1"} >= {"x"}
    schema = next(t for t in report.tools if t["name"] == "nested_config")["inputSchema"]
    assert schema["properties"]["tree"]["properties"]["child"]["type"] == "object"


def test_ref_cycles_are_listed_and_linted(no_leftovers):
    report, _ = scan_zoo("zoo-ref-cycle")
    assert report.errors == []
    assert [t["name"] for t in report.tools] == ["walk_graph"]
    assert "S1" in rule_ids(report)


def test_ref_cycles_survive_the_probes(no_leftovers):
    report, _ = scan_zoo("zoo-ref-cycle", probes=ProbeOptions(timeout=10))
    assert [t["name"] for t in report.tools] == ["walk_graph"]
    assert report.sandbox.teardown.complete


@pytest.mark.parametrize(("command", "tool", "recorded"), [
    ("zoo-stdout-flood", "flush_cache", "flooded stdout"),  # 300 MB of log lines during the call
    ("zoo-big-result", "export_all", "line over 8 MiB"),  # a 30 MB tools/call result
])
def test_a_flood_or_a_huge_result_during_a_call_ends_with_a_report(command, tool, recorded, no_leftovers):
    report, seconds = scan_zoo(command, probes=ProbeOptions(timeout=15))
    assert [t["name"] for t in report.tools] == [tool]
    assert any(recorded in e for e in report.errors), (report.errors, [p.error for p in report.probes])
    assert report.sandbox.teardown.complete
    print(f"{command} with probes: {seconds:.1f} s")


def test_the_flood_through_the_cli_exits_with_a_code_not_a_traceback(tmp_path, no_leftovers):
    out = tmp_path / "report.json"
    result = run_cli("scan", str(ZOO), "--command", "zoo-stdout-flood", "--json", str(out), timeout=600)
    assert result.returncode in (0, 1, 3), result.stderr[-2000:]
    assert "Traceback" not in result.stderr
    assert out.stat().st_size > 0


def test_run_containers_keep_no_log_and_stderr_still_arrives(monkeypatch, no_leftovers):
    seen: list[dict] = []
    original = run_server._enforce_no_log

    def spy(inspect: dict) -> None:
        seen.append(inspect)
        original(inspect)

    monkeypatch.setattr(run_server, "_enforce_no_log", spy)
    report = run_scan(ScanOptions(target=str(ZOO), command="zoo-crash", timeouts=Timeouts(startup=20, request=10)))
    assert seen and all(i["HostConfig"]["LogConfig"]["Type"] == "none" for i in seen)
    assert "missing configuration ZOO_API_KEY" in report.sandbox.stderr  # through the attach socket
