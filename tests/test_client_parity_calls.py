"""Parity of the scan's own MCP client (ScanClient) with the MCP SDK's `Client(mode="auto", cache=None)`:
docs/own-client.md §7 items 11-17 (tools/call, timeouts, a closed connection, id matching, what the server asks and
notifies, input_required and -32020). Each scenario runs against both clients with one scripted server
(tests/client_parity_harness.py); both must write the same messages in the same order and end the same way, and the
SDK's behaviour is checked against what the spec says. Items 1-10 and 18 are in tests/test_client_parity.py."""

from __future__ import annotations

from typing import Any

import anyio
import pytest

from tests.client_parity_harness import (CLOSE, INIT_RESULT, Run, both, error, legacy, modern, modern_list, raised,
                                         result, same)

OUT = {"type": "object", "properties": {"n": {"type": "integer"}}, "required": ["n"]}
MODERN_CALL = {"resultType": "complete"}


def _server(era: str, tools: list[dict[str, Any]], calls: list[Any]) -> Any:
    """`era` ("legacy", "modern", or a handshake version): tools/list answered `tools`; the n-th tools/call answered
    `calls[n]` (the last one for ever after): a result dict, an error dict (with "code"), or None (no answer)."""
    def serve(message: dict[str, Any], run: Run) -> list[Any]:
        if message.get("method") == "tools/list":
            return [result(message, modern_list(tools) if era == "modern" else {"tools": tools})]
        if message.get("method") != "tools/call":
            return []
        answer = calls[min(run.methods().count("tools/call"), len(calls)) - 1]
        if answer is None:
            return []
        if "code" in answer:
            return [error(message, answer["code"], answer["message"], answer.get("data"))]
        return [result(message, {**(MODERN_CALL if era == "modern" else {}), **answer})]
    if era == "modern":
        return modern(serve)
    return legacy(serve, None if era == "legacy" else {**INIT_RESULT, "protocolVersion": era})


def _calls(listed: bool = True, count: int = 1, arguments: Any = None, **options: Any) -> Any:
    """A scenario: tools listed (or not), then `count` calls of tool t, each call's outcome kept."""
    async def scenario(client: Any, run: Run) -> Any:
        outcomes = [await client.list_tools()] if listed else []
        for _ in range(count):
            try:
                outcomes.append(("returned", await client.call_tool("t", arguments or {}, **options)))
            except Exception as exc:  # noqa: BLE001 - the outcome under test
                outcomes.append(("raised", *raised(exc)))
        return outcomes
    return scenario


def _tool(schema: Any = None) -> dict[str, Any]:
    return {"name": "t", "inputSchema": {"type": "object"}, **({} if schema is None else {"outputSchema": schema})}


def _first_line(outcome: Any) -> Any:
    """An outcome kept by a scenario (dumped: a list) with a RuntimeError's text cut to its first line."""
    return [*outcome[:2], outcome[2].split("\n")[0]] if outcome[1] == "RuntimeError" else list(outcome)


# ---- 11. output schemas -------------------------------------------------------------------------------------------

DRAFT7 = {"$schema": "http://json-schema.org/draft-07/schema#", "type": "object",
          "properties": {"l": {"type": "array", "items": [{"type": "integer"}]}}}
INVALID = "Invalid structured content returned by tool t: "
BAD_SCHEMA = "Invalid schema for tool t: "
OUTPUT_CASES = {
    "conforming": (OUT, {"content": [], "structuredContent": {"n": 1}}, "returned"),
    "bad-value": (OUT, {"content": [], "structuredContent": {"n": "x"}}, INVALID + "'x' is not of type 'integer'"),
    "absent": (OUT, {"content": []}, "Tool t has an output schema but did not return structured content"),
    "null": (OUT, {"content": [], "structuredContent": None}, INVALID),
    "is-error": (OUT, {"content": [], "structuredContent": {"n": "x"}, "isError": True}, "returned"),
    "no-schema": (None, {"content": []}, "returned"),
    "format-unchecked": ({"type": "object", "properties": {"e": {"type": "string", "format": "email"}}},
                         {"content": [], "structuredContent": {"e": "nope"}}, "returned"),
    "bad-schema": ({"type": "object", "properties": {"n": {"type": 5}}},
                   {"content": [], "structuredContent": {"n": 1}}, BAD_SCHEMA),
    "unresolvable-ref": ({"type": "object", "properties": {"n": {"$ref": "#/$defs/missing"}}},
                         {"content": [], "structuredContent": {"n": 1}}, BAD_SCHEMA),
    "draft7-tuple": (DRAFT7, {"content": [], "structuredContent": {"l": ["x"]}}, INVALID),
    "2020-12-tuple": ({**DRAFT7, "$schema": "https://json-schema.org/draft/2020-12/schema"},
                      {"content": [], "structuredContent": {"l": ["x"]}}, BAD_SCHEMA),
}


@pytest.mark.parametrize("era", ["legacy", "modern"])
@pytest.mark.parametrize("case", list(OUTPUT_CASES))
def test_11_output_schema_checks_on_two_calls(case: str, era: str) -> None:
    """A conforming result passes; a bad value, absent or null structuredContent, a bad schema (on every call) or an
    unresolvable $ref give the SDK's RuntimeError texts; isError results, formats and schema-less tools are not
    checked; the $schema dialect decides the rules."""
    schema, answer, expected = OUTPUT_CASES[case]
    sdk = same(_server(era, [_tool(schema)], [answer]), _calls(count=2))
    outcomes = sdk.outcome[1][1:]
    if expected == "returned":
        assert [outcome[0] for outcome in outcomes] == ["returned"] * 2
    else:
        assert all(outcome[:2] == ["raised", "RuntimeError"] and outcome[2].startswith(expected)
                   for outcome in outcomes), outcomes
    assert sdk.methods().count("tools/list") == 1


@pytest.mark.parametrize("listing", [[_tool(OUT)], []], ids=["named", "not-named"])
def test_11_an_unlisted_tool_first_gets_one_tools_list(listing: list[dict[str, Any]]) -> None:
    """Calling a tool never listed: one tools/list of the client's own after the call; named there, its schema is
    checked (and no second list); not named, the result is not checked, and the next call lists again."""
    sdk = same(_server("legacy", listing, [{"content": [], "structuredContent": {"n": "x"}}]),
               _calls(listed=False, count=2))
    requests = [line.get("method") for line in sdk.received if "id" in line][2:]
    if listing:
        assert requests == ["tools/call", "tools/list", "tools/call"]
        assert [_first_line(outcome) for outcome in sdk.outcome[1]] == [
            ["raised", "RuntimeError", INVALID + "'x' is not of type 'integer'"]] * 2
    else:
        assert requests == ["tools/call", "tools/list"] * 2
        assert [outcome[0] for outcome in sdk.outcome[1]] == ["returned"] * 2


def test_11_call_arguments_and_results_as_the_sdk_sends_and_dumps_them() -> None:
    """Nulls and empty objects in the arguments are written as given; a legacy result gains isError false and
    resultType complete, loses unknown keys; at 2026-07-28 the call's params end with `_meta`."""
    answer = {"content": [{"type": "text", "text": "hi", "x": 1}], "vendor": True}
    arguments = {"a": None, "b": {}, "c": [None]}
    for era in ("legacy", "modern"):
        sdk = same(_server(era, [_tool()], [answer]), _calls(arguments=arguments))
        call = sdk.received[-1]
        assert call["params"]["name"] == "t" and call["params"]["arguments"] == arguments
        assert list(call["params"]) == (["name", "arguments"] + (["_meta"] if era == "modern" else []))
        assert sdk.outcome[1][1] == ["returned", {"content": [{"type": "text", "text": "hi"}], "isError": False,
                                                  "resultType": "complete"}]


# ---- 12-13. timeouts and a closed connection ----------------------------------------------------------------------

@pytest.mark.parametrize("era", ["legacy", "modern"])
@pytest.mark.parametrize("per_call", [None, 0.5])
def test_12_a_hung_call_is_cancelled_then_raises_32001(era: str, per_call: float | None) -> None:
    """No answer within the read timeout (or the call's own): `notifications/cancelled` with "timed out after
    1.0s" (no `_meta`, in both eras), then MCPError(-32001, "Request 'tools/call' timed out")."""
    options = {} if per_call is None else {"read_timeout_seconds": per_call}
    sdk = same(_server(era, [_tool()], [None]), _calls(**options), read_timeout=1.0)
    call = sdk.received[-2]
    assert sdk.received[-1] == {"jsonrpc": "2.0", "method": "notifications/cancelled", "params": {
        "requestId": call["id"], "reason": f"timed out after {per_call or 1.0}s"}}
    assert sdk.outcome[1][1] == ["raised", "rpc", -32001, "Request 'tools/call' timed out", None]
    waited = sdk.times[-1] - sdk.times[-2]
    assert (per_call or 1.0) - 0.1 <= waited <= (per_call or 1.0) + 2.0


def test_12_a_hung_list_times_out_the_same_way() -> None:
    """A tools/list never answered: cancelled "timed out after 0.5s", MCPError(-32001, "Request 'tools/list'...")."""
    sdk = same(legacy(lambda message, run: []), lambda client, run: client.list_tools(), read_timeout=0.5)
    assert sdk.received[-1]["params"] == {"requestId": 3, "reason": "timed out after 0.5s"}
    assert sdk.outcome == ("raised", "rpc", -32001, "Request 'tools/list' timed out", None)


@pytest.mark.parametrize("era", ["legacy", "modern"])
def test_12_a_caller_deadline_first_cancels_with_caller_cancelled(era: str) -> None:
    """An outer fail_after that fires before the read timeout: the cancel says "caller cancelled", and the caller
    gets TimeoutError."""
    async def scenario(client: Any, run: Run) -> Any:
        await client.list_tools()
        with anyio.fail_after(0.3):
            await client.call_tool("t", {})

    sdk = same(_server(era, [_tool()], [None]), scenario, read_timeout=1.0)
    assert sdk.received[-1] == {"jsonrpc": "2.0", "method": "notifications/cancelled", "params": {
        "requestId": sdk.received[-2]["id"], "reason": "caller cancelled"}}
    assert sdk.outcome == ("raised", "TimeoutError", "")


@pytest.mark.parametrize("era", ["legacy", "modern"])
def test_13_a_connection_closed_mid_call_fails_it_and_every_later_request(era: str) -> None:
    """The server's stdout ends while a call waits: MCPError(-32000, "Connection closed"); the next request raises
    the same without being written."""
    def script(message: dict[str, Any], run: Run) -> list[Any]:
        return [CLOSE] if message.get("method") == "tools/call" else _server(era, [_tool()], [{}])(message, run)

    async def scenario(client: Any, run: Run) -> Any:
        outcomes = await _calls()(client, run)
        try:
            outcomes.append(("returned", await client.list_tools()))
        except Exception as exc:  # noqa: BLE001 - the outcome under test
            outcomes.append(("raised", *raised(exc)))
        return outcomes

    sdk = same(script, scenario)
    assert sdk.received[-1]["method"] == "tools/call"
    assert sdk.outcome[1][1:] == [["raised", "rpc", -32000, "Connection closed", None]] * 2


# ---- 14. matching answers to requests -----------------------------------------------------------------------------

def test_14_numeric_string_ids_match_and_stray_answers_are_dropped() -> None:
    """An answer with id "3" answers request 3; answers to no request waiting (an unknown id, a null id, the
    discover answered again, request 3 answered twice) are dropped, and the next request gets its own answer."""
    def serve(message: dict[str, Any], run: Run) -> list[Any]:
        if message.get("method") != "tools/list":
            return []
        if message["id"] == 3:
            page = {"tools": [{"name": "first", "inputSchema": {"type": "object"}}]}
            return [{**result(message, page), "id": 999}, {**error(message, -32603, "who?"), "id": None},
                    {**error(message, -32601, "late"), "id": 1}, {**result(message, page), "id": "3"},
                    {**result(message, {"tools": []}), "id": 3}]
        page = {"tools": [{"name": "second", "inputSchema": {"type": "object"}}]}
        return [{**result(message, page), "id": {4: "+4", 5: " 5 "}.get(message["id"], message["id"])}]

    async def scenario(client: Any, run: Run) -> Any:
        return [await client.list_tools(), await client.list_tools(), await client.list_tools()]

    sdk = same(legacy(serve), scenario)
    assert [[tool["name"] for tool in page["tools"]] for page in sdk.outcome[1]] == [["first"], ["second"]] + [
        ["second"]]
    assert [line.get("id") for line in sdk.received] == [1, 2, None, 3, 4, 5]


# ---- 17. input_required and -32020 (2026-07-28) -------------------------------------------------------------------

SAMPLING = {"messages": [{"role": "user", "content": {"type": "text", "text": "hi"}}], "maxTokens": 5}
ELICIT = {"message": "name?", "requestedSchema": {"type": "object", "properties": {}}}


@pytest.mark.parametrize("method, params, message", [
    ("sampling/createMessage", SAMPLING, "Sampling not supported"),
    ("elicitation/create", ELICIT, "Elicitation not supported"),
    ("roots/list", None, "List roots not supported"),
])
def test_17_input_requests_are_refused_without_sending_anything(method: str, params: Any, message: str) -> None:
    """A call answered input_required with an input request: MCPError(-32600, "<X> not supported") and nothing
    written after the call (no retry, no request to the server)."""
    asked = {"method": method, **({} if params is None else {"params": params})}
    sdk = same(_server("modern", [_tool()], [{"resultType": "input_required", "inputRequests": {"r1": asked}}]),
               lambda client, run: client.call_tool("t", {}))
    assert sdk.methods() == ["server/discover", "tools/call"]
    assert sdk.outcome == ("raised", "rpc", -32600, message, None)


def test_17_of_several_input_requests_the_last_ones_refusal_is_raised() -> None:
    """Every refusal finishes at once, and the SDK raises the one that finished last: the last request's."""
    asked = {"a": {"method": "elicitation/create", "params": ELICIT},
             "b": {"method": "sampling/createMessage", "params": SAMPLING}}
    sdk = same(_server("modern", [_tool()], [{"resultType": "input_required", "inputRequests": asked}]),
               lambda client, run: client.call_tool("t", {}))
    assert sdk.outcome == ("raised", "rpc", -32600, "Sampling not supported", None)


def test_17_request_state_alone_is_resent_ten_times_then_the_rounds_error() -> None:
    """input_required with requestState only: 11 calls (new ids, requestState first in params) 50, 100, 200, then
    250 ms apart; then the SDK's InputRequiredRoundsExceededError, which the own client may raise as a plain
    RuntimeError with the same text."""
    sdk, own = both(_server("modern", [_tool()], [{"resultType": "input_required", "requestState": "S"}]),
                    lambda client, run: client.call_tool("t", {}))
    for run in (sdk, own):
        calls = run.received[1:]
        assert [line["id"] for line in calls] == list(range(2, 13)), run.name
        assert all(list(line["params"])[:1] == ["requestState"] for line in calls[1:]), run.name
        gaps = [later - earlier for earlier, later in zip(run.times[1:], run.times[2:])]
        # the lower bounds are the behaviour (a sleep is never shorter); the upper ones only tell a busy machine apart
        assert all(low <= gap <= low + 1.0 for gap, low in zip(gaps, [0.05, 0.1, 0.2] + [0.25] * 7)), gaps
    assert type(sdk.exc).__name__ == "InputRequiredRoundsExceededError" and isinstance(sdk.exc, RuntimeError)
    assert isinstance(own.exc, RuntimeError)
    # the same words up to the semicolon (what call_send.SDK_REFUSALS knows); the SDK's advice to its caller is not
    # the scan's to give
    assert str(sdk.exc).split(";")[0] == str(own.exc).split(";")[0]
    assert str(own.exc) == "Server returned InputRequiredResult for more than 10 rounds; the tool was called 11 times"
    assert sdk.received == own.received


@pytest.mark.parametrize("era, calls, methods, outcome", [
    ("modern", [{"resultType": "input_required", "requestState": "S"}, {"content": []}],
     ["tools/call", "tools/call", "tools/list"], ["returned"]),
    ("modern", [{"resultType": "input_required"}], ["tools/call"], ["raised", "ValidationError"]),
    ("legacy", [{"resultType": "input_required", "requestState": "S"}], ["tools/call"], ["raised", "ValidationError"]),
    ("legacy", [{"resultType": "input_required", "requestState": "S", "content": []}], ["tools/call", "tools/list"],
     ["returned"]),
], ids=["state-then-result", "neither-field", "legacy-no-content", "legacy-keys-removed"])
def test_17_other_input_required_answers(era: str, calls: list[Any], methods: list[str], outcome: list[Any]) -> None:
    """A state-only round then a result returns it; input_required with neither field, or at 2025-11-25 without
    content, is a ValidationError; at 2025-11-25 the input_required keys are removed (a plain result)."""
    sdk = same(_server(era, [], calls), _calls(listed=False))
    assert [method for method in sdk.methods() if method in ("tools/call", "tools/list")] == methods
    assert sdk.outcome[1][0][:len(outcome)] == outcome


def _mismatching(relist: list[Any], calls: list[Any]) -> Any:
    """2026-07-28: the n-th tools/list answered `relist[n]` (a page's tools, or an error with "code"), tools/call as
    `_server` answers it."""
    calling = _server("modern", [], calls)

    def script(message: dict[str, Any], run: Run) -> list[Any]:
        if message.get("method") != "tools/list":
            return calling(message, run)
        page = relist[run.methods().count("tools/list") - 1]
        if isinstance(page, dict):
            return [error(message, page["code"], page["message"])]
        return [result(message, modern_list(page, **({"nextCursor": "2"} if page == [] else {})))]
    return script


MISMATCH = {"code": -32020, "message": "mismatch 1"}


@pytest.mark.parametrize("relist, calls, lists, outcome", [
    ([[_tool()]], [MISMATCH, {"content": []}], 1, ["returned"]),
    ([[], [_tool()]], [MISMATCH, {"content": []}], 2, ["returned"]),
    ([[_tool()]], [MISMATCH, {"code": -32020, "message": "mismatch 2"}], 1, ["raised", "rpc", -32020, "mismatch 2"]),
    ([{"code": -32603, "message": "no list"}], [MISMATCH, {"content": []}], 1,
     ["raised", "rpc", -32020, "mismatch 1"]),
], ids=["relist-resend", "relist-two-pages", "second-mismatch", "relist-fails"])
def test_17_header_mismatch_relists_then_resends_once(relist: list[Any], calls: list[Any], lists: int,
                                                       outcome: list[Any]) -> None:
    """-32020 at 2026-07-28: tools/list page by page until one names the tool, then one resend with a new id. A
    failed re-list raises the first error; a second -32020 is raised as it came (the SDK re-raises only the re-list's
    failure as the first error, docs/own-client.md §3 says otherwise)."""
    sdk = same(_mismatching(relist, calls), _calls(listed=False))
    requests = [line for line in sdk.received if "id" in line][1:]
    resent = 1 if outcome[-1] != "mismatch 1" else 0
    assert [line["method"] for line in requests] == ["tools/call"] + ["tools/list"] * lists + ["tools/call"] * resent
    assert [line["id"] for line in requests] == list(range(2, 2 + len(requests)))
    assert sdk.outcome[1][0][:len(outcome)] == outcome


def test_17_header_mismatch_before_2026_is_just_raised() -> None:
    """At 2025-11-25 a -32020 answer is raised as sent: no re-list, no resend."""
    sdk = same(_server("legacy", [_tool()], [MISMATCH, {"content": []}]), _calls(listed=False))
    assert [method for method in sdk.methods() if method in ("tools/call", "tools/list")] == ["tools/call"]
    assert sdk.outcome[1][0] == ["raised", "rpc", -32020, "mismatch 1", None]
