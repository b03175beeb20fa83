"""Issue 11 §6 live: zoo-probe-protocol in a real sandbox. A -32603 answer to a valid call is P4's own case (the
isError failure beside it is not), the 2.5 s tool gets a P9 info (the fast one nothing), the tool that requires tasks
is recorded as not probed (no P4, never called), and the notifications sent during calls are in the report."""

from __future__ import annotations

import pytest

from scanner.probes.plan import NEEDS_TASKS
from tests.test_probes_live import findings, probe_zoo


@pytest.mark.docker
def test_protocol_level_failures_notifications_slow_calls_and_tasks(no_leftovers):
    report = probe_zoo("zoo-probe-protocol", timeout=8.0)
    assert report.errors == [], report.errors

    rpc = [f for f in findings(report, "P4") if "JSON-RPC error" in f.message]
    assert [f.tool for f in rpc] == ["fetch_report"], findings(report, "P4")
    assert "answered a tool failure as a JSON-RPC error (-32603) instead of an isError result" in rpc[0].message
    assert not [f for f in findings(report, "P4", "fetch_summary") if "JSON-RPC" in f.message]
    failed = next(p for p in report.probes if p.tool == "fetch_report" and p.kind == "generated")
    assert failed.status == "protocol_error" and failed.error_code == -32603

    slow = findings(report, "P9")
    assert [(f.tool, f.severity) for f in slow] == [("slow_lookup", "info")], slow
    assert "P7" not in {f.rule_id for f in report.findings}

    not_probed = [p for p in report.probes if p.tool == "long_job"]
    assert [(p.status, p.error) for p in not_probed] == [("not_probed", NEEDS_TASKS)]
    assert not findings(report, "P4", "long_job") and not findings(report, "P9", "long_job")
    assert any(p.tool == "maybe_job" and p.status == "ok" for p in report.probes)  # optional: probed plainly

    seen = {n.method: n for n in report.notifications}
    assert seen["notifications/tools/list_changed"].count >= 1
    message = seen["notifications/message"]
    assert message.count >= 1 and "slow lookup done" in message.first_params
    assert "\x1b" not in message.first_params and "\\u001b" in message.first_params
    assert not findings(report, "P8")  # list_changed with nothing changed is no rug pull
