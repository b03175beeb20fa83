"""Issue 11 §6, protocol level: a valid call answered by a JSON-RPC error (P4's own case), slow calls (P9), tools
that need tasks (not probed), and the server notifications the session received (recorded by method)."""

from __future__ import annotations

import json
from typing import Any

from sandbox.run.workspace_seed import seed_manifest
from scanner.probes.model import ProbeCall, result_from_call, result_from_failure, result_not_probed
from scanner.probes.notifications import MAX_METHODS, NotificationLog, params_preview
from scanner.probes.plan import NEEDS_TASKS, plan_calls
from scanner.report.model import Report, TargetInfo
from scanner.rules.probe import (P9_INFO_SECONDS, P9_WARNING_SECONDS, check_slow_calls, check_unhelpful_errors,
                                 evaluate_probes)
from scanner.rules.probe_crashes import status_findings

TOOL = {"name": "lookup", "inputSchema": {"type": "object", "properties": {"q": {"type": "string"}}}}


def call(kind: str = "generated", **extra: Any) -> ProbeCall:
    label = "generated" if kind != "error" else "missing q"
    return ProbeCall("lookup", label=label, kind=kind, arguments={"q": "demo"}, **extra)  # type: ignore[arg-type]


def rpc_error(code: int, message: str = "Internal error", **extra: Any) -> Any:
    return result_from_failure(call(**extra), status="protocol_error", error=f"error {code}: {message}",
                               latency_ms=5, error_code=code)


def answered(seconds: float) -> Any:
    return result_from_call(call(), call_result={"content": [{"type": "text", "text": "found 1"}]},
                            latency_ms=seconds * 1000)


# ---- P4: a tool failure answered as a JSON-RPC error --------------------------------------------------------------

def test_a_valid_call_answered_by_a_jsonrpc_error_is_its_own_p4_case() -> None:
    hits = check_unhelpful_errors(TOOL, [rpc_error(-32603)])
    assert [hit.finding.rule_id for hit in hits] == ["P4"]
    assert ("answered a tool failure as a JSON-RPC error (-32603) instead of an isError result"
            in hits[0].finding.message)
    assert "opaque" not in hits[0].finding.message  # distinct from the unhelpful-error case
    assert "error -32603" in (hits[0].finding.evidence or "")


def test_any_code_counts_for_a_valid_call_and_the_codes_are_named() -> None:
    hits = check_unhelpful_errors(TOOL, [rpc_error(-32603), rpc_error(-32000, "backend down")])
    assert len(hits) == 1 and "(-32000, -32603)" in hits[0].finding.message


def test_a_fixture_answered_by_a_jsonrpc_error_counts_unless_it_expects_an_error() -> None:
    assert check_unhelpful_errors(TOOL, [rpc_error(-32603, kind="fixture")])
    expected = rpc_error(-32602, "q is not a string", kind="fixture", expect_error=True)
    assert check_unhelpful_errors(TOOL, [expected]) == []


def test_near_miss_an_error_probe_answered_by_a_jsonrpc_error_is_not_that_case() -> None:
    hits = check_unhelpful_errors(TOOL, [rpc_error(-32602, "Invalid params: 'q' is required", kind="error",
                                                   expect_error=True, target="q")])
    assert hits == []


def test_near_miss_an_is_error_result_is_not_that_case() -> None:
    result = result_from_call(call(), call_result={"content": [{"type": "text", "text": "No entry named demo; "
                                                                "search for a name first."}], "isError": True},
                              latency_ms=5)
    assert check_unhelpful_errors(TOOL, [result]) == []


# ---- P9: slow calls under the timeout -------------------------------------------------------------------------------

def test_p9_info_at_two_seconds_and_warning_at_ten() -> None:
    info = check_slow_calls(TOOL, [answered(0.1), answered(2.5)])
    assert [(hit.finding.rule_id, hit.finding.severity) for hit in info] == [("P9", "info")]
    assert "2.5 s" in info[0].finding.message
    warning = check_slow_calls(TOOL, [answered(P9_WARNING_SECONDS + 0.5)])
    assert [hit.finding.severity for hit in warning] == ["warning"]
    assert P9_INFO_SECONDS == 2.0 and P9_WARNING_SECONDS == 10.0


def test_p9_near_miss_under_the_threshold_and_timeouts_are_p7s() -> None:
    assert check_slow_calls(TOOL, [answered(P9_INFO_SECONDS - 0.1)]) == []
    timed_out = result_from_failure(call(), status="timeout", error="no answer within 30 s; cancelled",
                                    latency_ms=30_000)
    assert check_slow_calls(TOOL, [timed_out]) == []
    assert [f.rule_id for f in status_findings([timed_out], timeout_s=30)] == ["P7"]


# ---- tools that require tasks ---------------------------------------------------------------------------------------

def _tool(name: str, task_support: str | None) -> dict[str, Any]:
    return {**TOOL, "name": name, **({"execution": {"taskSupport": task_support}} if task_support else {})}


def test_a_tool_that_requires_tasks_is_not_called_plainly() -> None:
    tools = [_tool("long_job", "required"), _tool("optional_job", "optional"), _tool("plain", None),
             _tool("never", "forbidden")]
    plan = plan_calls(tools, seed_manifest(), fixtures=None, no_destructive=False, with_error_probes=True,
                      max_calls=500)
    assert plan.needs_tasks == ["long_job"]
    assert "long_job" not in {c.tool for c in plan.calls}
    assert {"optional_job", "plain", "never"} <= {c.tool for c in plan.calls}  # the near misses are probed


def test_the_not_probed_record_says_needs_tasks_and_no_rule_fires_on_it() -> None:
    record = result_not_probed("long_job", NEEDS_TASKS)
    assert record.status == "not_probed" and (record.error or "").startswith("not probed: needs tasks")
    tool = _tool("long_job", "required")
    assert evaluate_probes([tool], [record]) == [] and status_findings([record], timeout_s=30) == []


# ---- notifications --------------------------------------------------------------------------------------------------

def test_notifications_are_counted_by_method_with_the_first_params_capped_and_escaped() -> None:
    log = NotificationLog()
    log.record("notifications/tools/list_changed", None)
    log.record("notifications/tools/list_changed", None)
    log.record("notifications/message", {"level": "info", "data": "\x1b[2J\u009bhidden" + "x" * 5_000})
    log.record("notifications/message", {"level": "info", "data": "second"})
    entries = {entry.method: entry for entry in log.entries()}
    assert entries["notifications/tools/list_changed"].count == 2
    assert entries["notifications/tools/list_changed"].first_params == ""
    first = entries["notifications/message"].first_params
    assert entries["notifications/message"].count == 2 and "second" not in first
    assert first.isascii() and "\x1b" not in first and "\\u001b" in first and "\\u009b" in first
    assert len(first) < 400 and "truncated" in first


def test_params_preview_is_bounded_for_deep_values() -> None:
    deep: Any = "leaf"
    for _ in range(5_000):
        deep = {"a": deep}
    assert len(params_preview(deep)) <= 400


def test_methods_past_the_cap_are_only_counted() -> None:
    log = NotificationLog()
    for index in range(MAX_METHODS + 3):
        log.record(f"notifications/custom/{index}", None)
    assert len(log.entries()) == MAX_METHODS and log.dropped == 3


def test_the_report_carries_the_notifications() -> None:
    log = NotificationLog()
    log.record("notifications/progress", {"progressToken": 1, "progress": 0.5})
    report = Report(target=TargetInfo(kind="file", name="x", requested="x"), notifications=log.entries())
    dumped = json.loads(report.model_dump_json())
    assert dumped["notifications"] == [{"method": "notifications/progress", "count": 1,
                                        "first_params": '{"progress": 0.5, "progressToken": 1}'}]


def test_a_notification_nested_deeper_than_pydantic_dumps_is_recorded_with_its_preview_capped() -> None:
    """A valid notifications/message whose data is nested 400 levels deep (the transport reads ~1,000) is counted,
    its preview cut at the preview's depth; a shallow one is dumped as before (near miss)."""
    import mcp_types

    deep: dict[str, Any] = {}
    for _ in range(400):
        deep = {"x": deep}
    log = NotificationLog()
    message = mcp_types.LoggingMessageNotification.model_validate(
        {"method": "notifications/message", "params": {"level": "info", "data": deep}})
    assert log.note(message) is False
    entry = log.entries()[0]
    assert entry.count == 1 and entry.first_params.startswith('{"data": {"x": {"x": ') and "nested deeper" in \
        entry.first_params
    shallow = NotificationLog()
    shallow.note(mcp_types.LoggingMessageNotification.model_validate(
        {"method": "notifications/message", "params": {"level": "info", "data": {"k": 1}}}))
    assert shallow.entries()[0].first_params == '{"data": {"k": 1}, "level": "info"}'
