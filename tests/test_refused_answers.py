"""Answers the MCP client refuses after they arrived (a result that breaks the tool's own outputSchema, one that is not
a tools/call result, a handshake answer it does not accept) are the server's doing: the call is recorded with the
reason and P11 says so, the listing records the handshake's refusal; neither fails the scan. Pure logic; the live
scan of zoo-bad-answers is tests/test_bad_answers_live.py."""

from __future__ import annotations

from typing import Any

import anyio
import mcp_types
import pytest
from pydantic import ValidationError

from scanner.pipeline.session_failures import explain
from scanner.pipeline.transport import WireHealth
from scanner.probes.call_send import send_call
from scanner.probes.model import ProbeCall, is_refused, result_from_call, result_from_failure
from scanner.rules.probe import check_refused_answers, p4_problems

TOOL = {"name": "count_notes", "inputSchema": {"type": "object"},
        "outputSchema": {"type": "object", "required": ["count"]}}
CALL = ProbeCall(tool="count_notes", label="generated", arguments={}, kind="generated")


class _Refusing:
    """A client whose call_tool raises what the SDK raises for a refused answer."""

    def __init__(self, raised: Exception) -> None:
        self.raised = raised

    async def call_tool(self, *_args: Any, **_kwargs: Any) -> Any:
        raise self.raised


def _validation_error() -> ValidationError:
    try:
        mcp_types.CallToolResult.model_validate({"content": "not a list"})
    except ValidationError as exc:
        return exc
    raise AssertionError("the model accepted a bad result")


def _sent(raised: Exception) -> Any:
    async def send() -> Any:
        return await send_call(_Refusing(raised), CALL, 1.0)  # type: ignore[arg-type]
    return anyio.run(send)


def test_an_answer_breaking_the_output_schema_is_a_refused_call_not_a_crash() -> None:
    result, wire = _sent(RuntimeError("Invalid structured content returned by tool count_notes: 'count' is a "
                                      "required property"))
    assert wire is None and result.status == "protocol_error" and result.error_code is None and is_refused(result)
    assert result.error == ("the MCP client refused the answer: Invalid structured content returned by tool "
                            "count_notes: 'count' is a required property")


def test_a_result_that_is_not_a_call_result_is_refused_with_where_not_what() -> None:
    result, _ = _sent(_validation_error())
    assert is_refused(result)
    assert result.error.startswith("the answer is not a tools/call result (1 problems, first: content:")
    assert "not a list" not in result.error  # the answer's values are not quoted


def test_p11_fires_once_per_tool_naming_every_refused_probe() -> None:
    refused = [_sent(RuntimeError("Tool count_notes has an output schema but did not return structured content"))[0],
               _sent(_validation_error())[0]]
    [finding] = check_refused_answers(TOOL, refused)
    assert finding.finding.rule_id == "P11" and finding.finding.tool == "count_notes"
    assert finding.finding.severity == "warning"
    assert finding.finding.message == ("The MCP client refused the tool's answer to probe 'generated' (it breaks the "
                                       "tool's outputSchema or the MCP schema of a tools/call result).")
    assert "did not return structured content" in (finding.finding.evidence or "")  # the server's words: evidence


def test_near_miss_an_error_the_server_answered_with_is_p4s_not_p11s() -> None:
    answered = result_from_failure(CALL, status="protocol_error", error="error -32603: boom", latency_ms=1.0,
                                   error_code=-32603)
    ok = result_from_call(CALL, call_result={"content": [{"type": "text", "text": "3"}]}, latency_ms=1.0)
    assert check_refused_answers(TOOL, [answered, ok]) == []
    assert p4_problems(answered, TOOL) == ["jsonrpc_error"]


def test_near_miss_a_runtime_error_that_is_not_the_sdk_refusing_an_answer_fails_the_scan() -> None:
    with pytest.raises(RuntimeError, match="async context manager"):  # a scanner bug, not the server's doing
        _sent(RuntimeError("Client must be used within an async context manager"))


def test_a_refused_answer_is_not_called_a_json_rpc_error_by_p4() -> None:
    refused, _ = _sent(RuntimeError("Tool count_notes has an output schema but did not return structured content"))
    assert p4_problems(refused, TOOL) == []


def test_the_handshake_answers_the_client_refused_are_explained() -> None:
    health = WireHealth()
    step = "connecting (initialize)"
    assert explain(step, RuntimeError("Unsupported protocol version from the server: 9999-01-01"), health, 5) == (
        "connecting (initialize): the MCP client refused the answer (Unsupported protocol version from the server: "
        "9999-01-01)")
    assert explain(step, _validation_error(), health, 5).startswith(
        "connecting (initialize): the answer does not match the MCP schema (1 problems, first: content:")


def test_while_connecting_a_refused_handshake_is_recorded_and_any_other_runtime_error_is_not() -> None:
    from scanner.pipeline.inventory import CONNECTING, RECORDED, _ended_by

    refused = RuntimeError("Unsupported protocol version from the server: 1999-01-01")
    assert _ended_by(refused, CONNECTING, RECORDED) is refused
    assert _ended_by(ExceptionGroup("sdk", [ExceptionGroup("inner", [refused])]), CONNECTING, RECORDED) is refused
    assert _ended_by(_validation_error(), CONNECTING, RECORDED) is not None
    bug = RuntimeError("Client must be used within an async context manager")  # the near misses: scanner bugs
    assert _ended_by(bug, CONNECTING, RECORDED) is None
    assert _ended_by(ExceptionGroup("sdk", [refused, bug]), CONNECTING, RECORDED) is None
    assert _ended_by(refused, "probing", RECORDED) is None  # after connecting, not known to be the server's
