"""The precision fixes against a real sandbox (zoo-precision, tests/servers/zoo/mcp_zoo/precision.py): a server's own
state is a B1 info, its helper child a B5 info, the call that stopped the server is P6's (a call that exits after
answering, and one that crashes right after a state-changing call), a restarted server's start-up traffic is no
call's, and a kill tool probed with the generated pid stops nothing."""

from __future__ import annotations

import pytest

from sandbox.run.policy import RunPolicy
from scanner.pipeline.inventory import Timeouts
from scanner.pipeline.scan import ScanOptions, run_scan
from scanner.probes.runner import ProbeOptions
from scanner.probes.value_generation import NO_PROCESS_PID
from scanner.report.model import Report
from tests.sandbox_helpers import ZOO

STORE = "/home/mcp/zoo-store.json"


@pytest.fixture(scope="module")
def report() -> Report:
    return run_scan(ScanOptions(target=str(ZOO), command="zoo-precision", policy=RunPolicy(env={"ZOO_STORE_FILE": STORE}),
                                timeouts=Timeouts(startup=20, request=10), probes=ProbeOptions(timeout=5.0)))


def _found(report: Report, rule: str, tool: str | None = "*") -> list:
    return [f for f in report.findings if f.rule_id == rule and (tool == "*" or f.tool == tool)]


@pytest.mark.docker
def test_own_state_is_a_b1_info_and_an_append_to_the_store_no_b1(report: Report) -> None:
    [recall] = _found(report, "B1", "recall")
    assert recall.severity == "info" and "tool state" in recall.message and "~/.zoo-precision" in recall.message
    assert _found(report, "B1", "remember") == []
    remember = next(b for b in report.behavior if b.tool == "remember" and b.files.modified)
    assert STORE in remember.files.modified  # the store was rewritten: the record shows it, B1 does not blame it


@pytest.mark.docker
def test_a_helper_child_is_a_b5_info(report: Report) -> None:
    [helper] = _found(report, "B5", "show_log")
    assert helper.severity == "info" and "cat" in helper.message


@pytest.mark.docker
def test_p6_names_the_call_that_stopped_the_server_and_the_kill_probe_stops_nothing(report: Report) -> None:
    found = _found(report, "P6")
    assert sorted(f.tool for f in found) == ["export_notes", "shutdown_worker"], [f.message for f in found]
    # shutdown_worker's exit 20 ms after its answer lands while the next call is out, or before the one after it;
    # either way it is a suspect, sent again to a fresh server, where it stops the server again: seen after its
    # window, or during its own looks when they took longer than 20 ms (or, the first time, with no other suspect)
    [stop] = [f.message for f in found if f.tool == "shutdown_worker"]
    assert "stopped it too" in stop or "during probe 'generated" in stop, stop
    kill = [p for p in report.probes if p.tool == "kill_process" and p.kind == "generated"]
    assert kill and all(p.arguments.get("pid") == NO_PROCESS_PID for p in kill)
    assert report.sandbox.teardown.server_ending is not None


@pytest.mark.docker
def test_a_crash_right_after_a_state_changing_call_is_the_crashing_calls(report: Report) -> None:
    # export_notes exits before answering, a few ms after remember's last probe answered: both are suspects; sent
    # again to fresh servers, remember is answered and outlives the window, export_notes crashes the server again
    export = _found(report, "P6", "export_notes")[0].message
    assert "during probe 'generated (sent again)'" in export, export
    again = [p for p in report.probes if p.label.endswith("(sent again)")]
    assert {p.tool for p in again} >= {"remember", "export_notes"}
    assert all(p.status != "crashed" for p in again if p.tool == "remember")
    assert [p.status for p in again if p.tool == "export_notes"] == ["crashed"]
    assert _found(report, "P6", "remember") == []


@pytest.mark.docker
def test_a_restarted_servers_start_up_lookup_is_no_calls_egress(report: Report) -> None:
    restarted = [b for b in report.behavior if b.call < 0 and b.sandbox == 1]
    assert restarted and restarted[0].label == "start-up after restart 1"
    assert any("updates.zoo-precision.invalid" in str(e) for e in restarted[0].egress)
    b2 = _found(report, "B2")
    assert [(f.tool, f.severity) for f in b2] == [(None, "error")] and "updates.zoo-precision" in b2[0].message
