"""Parity of the scan's own MCP client (ScanClient) with the MCP SDK's `Client(mode="auto", cache=None)`:
docs/own-client.md §7 items 15-16, what the server sends unasked (its requests, answered as the §4 table says, and its
notifications, handed to the message handler as the SDK hands them). One scripted server drives both clients
(tests/client_parity_harness.py); the other items are in tests/test_client_parity.py and test_client_parity_calls.py."""

from __future__ import annotations

from typing import Any

import pytest

from tests.client_parity_harness import (INIT_RESULT, Run, both, legacy, modern, modern_list, notification, request,
                                         result, same)

SAMPLING = {"messages": [{"role": "user", "content": {"type": "text", "text": "hi"}}], "maxTokens": 5}
ELICIT = {"message": "name?", "requestedSchema": {"type": "object", "properties": {}}}
ERAS = ["2025-11-25", "2025-03-26", "2026-07-28"]


def _era(era: str, serve: Any) -> Any:
    return modern(serve) if era == "2026-07-28" else legacy(serve, {**INIT_RESULT, "protocolVersion": era})


def _answer_list(message: dict[str, Any]) -> dict[str, Any]:
    return result(message, modern_list([]) if "_meta" in message.get("params", {}) else {"tools": []})


async def _listed(client: Any, run: Run) -> Any:
    page = await client.list_tools()
    run.note("listed")
    return page


def _deep(levels: int) -> dict[str, Any]:
    value: dict[str, Any] = {}
    for _ in range(levels):
        value = {"x": value}
    return value


DEEP = _deep(400)  # deeper than pydantic serializes, well within what the transport reads

# ---- 15. requests from the server ---------------------------------------------------------------------------------

ASKS = [request("s-7", "ping"), request(8, "ping", {"x": 1}), request(9, "roots/list"),
        request(10, "sampling/createMessage", SAMPLING), request(11, "elicitation/create", ELICIT),
        request(12, "sampling/createMessage", {"messages": "nope"}), request(13, "roots/list", {"_meta": 5}),
        request(14, "vendor/thing", {}), request(15, "tools/list"), request(16, "ping", {"_meta": {"progressToken": None}}),
        request(17, "ping", {"deep": DEEP})]


def _refused(code: int, message: str, data: Any = None) -> dict[str, Any]:
    return {"error": {"code": code, "message": message, **({} if data is None else {"data": data})}}


def _expected(era: str, ask: dict[str, Any]) -> dict[str, Any]:
    """The §4 table: what the client answers `ask` with at `era`."""
    method = ask["method"]
    not_found = _refused(-32601, "Method not found", method)
    if era == "2026-07-28":
        return not_found
    if ask["id"] in (12, 13, 16):  # params the revision's model or the version-free one refuses (a null token)
        return _refused(-32602, "Invalid request parameters", "")
    if method == "ping":
        return {"result": {}}
    refusals = {"roots/list": "List roots not supported", "sampling/createMessage": "Sampling not supported"}
    if era >= "2025-06-18":
        refusals["elicitation/create"] = "Elicitation not supported"
    return _refused(-32600, refusals[method]) if method in refusals else not_found


def _asking(message: dict[str, Any], run: Run) -> list[Any]:
    """On the client's tools/list: each request of ASKS in turn, the next once the last is answered; then the
    list answered."""
    if message.get("method") not in (None, "tools/list"):
        return []
    answered = sum(1 for line in run.received if "method" not in line)
    if answered < len(ASKS):
        return [ASKS[answered]]
    return [_answer_list(next(line for line in run.received if line.get("method") == "tools/list"))]


@pytest.mark.parametrize("era", ERAS)
def test_15_server_requests_are_answered_as_the_table_says(era: str) -> None:
    """ping answered {} (before 2026-07-28), roots/sampling/elicitation refused -32600 where the revision defines
    them, bad params -32602 with data "", the rest -32601 with the method as data (all of them at 2026-07-28); ids
    echoed as sent, "s-7" a string; an error's `data` written only when there is one."""
    sdk = same(_era(era, _asking), _listed)
    answers = [line for line in sdk.received if "method" not in line]
    assert answers == [{"jsonrpc": "2.0", "id": ask["id"], **_expected(era, ask)} for ask in ASKS]
    assert sdk.outcome[0] == "returned" and sdk.events == ["listed"]


# ---- 16. notifications --------------------------------------------------------------------------------------------

NOTES = [notification("notifications/tools/list_changed"), notification("notifications/vendor/x", {"a": 1}),
         notification("notifications/message", {"level": "LOUD", "data": "x"}),
         notification("notifications/message", {"level": "info", "data": {"k": 1}, "extra": 2}),
         notification("notifications/progress", {"progressToken": "never", "progress": 1, "total": 2}),
         notification("notifications/progress", {"progress": 1}),
         notification("notifications/cancelled", {"requestId": 99, "reason": "x"}),
         notification("notifications/resources/updated", {"uri": "file:///a"}),
         notification("notifications/prompts/list_changed", {"_meta": {"m": 1}}),
         notification("notifications/resources/list_changed"), notification("notifications/initialized"),
         notification("notifications/elicitation/complete", {"elicitationId": "e1"}),
         notification("notifications/subscriptions/acknowledged", {"notifications": {}}),
         notification("notifications/subscriptions/acknowledged", {"requestId": 1})]


def _notifying(message: dict[str, Any], run: Run) -> list[Any]:
    return [*NOTES, _answer_list(message)] if message.get("method") == "tools/list" else []


def _handed(era: str) -> list[Any]:
    """What the handler gets from NOTES at `era`, in order, then the list's return."""
    events = [("notified", "notifications/tools/list_changed", None),
              ("notified", "notifications/message", {"level": "info", "data": {"k": 1}}),
              ("notified", "notifications/progress", {"progressToken": "never", "progress": 1.0, "total": 2.0}),
              ("notified", "notifications/resources/updated", {"uri": "file:///a"}),
              ("notified", "notifications/prompts/list_changed", {"_meta": {"m": 1}}),
              ("notified", "notifications/resources/list_changed", None)]
    if era == "2025-11-25":
        events.append(("notified", "notifications/elicitation/complete", {"elicitationId": "e1"}))
    if era == "2026-07-28":
        events.append(("notified", "notifications/subscriptions/acknowledged", {"notifications": {}}))
    return [*events, "listed"]


@pytest.mark.parametrize("era", ERAS)
def test_16_valid_notifications_reach_the_handler_in_order_before_the_response(era: str) -> None:
    """The handler gets each notification the revision defines with valid params, as a model (unknown keys gone,
    progress 1 read as 1.0), in receive order, before the response written after them returns; vendor methods,
    invalid params, cancelled, a server's `initialized` and (at 2026-07-28) elicitation/complete never reach it."""
    sdk = same(_era(era, _notifying), _listed)
    assert sdk.events == _handed(era)


def test_15_a_request_sent_with_the_initialize_answer_is_read_at_the_negotiated_version() -> None:
    """The version is settled when the initialize answer is read, before `initialized` goes out: a 2025-03-26
    server's elicitation/create right behind its answer is -32601 (that revision has no elicitation), not
    2025-11-25's -32600, and its elicitation/complete notification is not handed on (2025-11-25's only)."""
    init = {**INIT_RESULT, "protocolVersion": "2025-03-26"}

    def script(message: dict[str, Any], run: Run) -> list[Any]:
        if message.get("method") == "initialize":
            return [result(message, init), notification("notifications/elicitation/complete", {"elicitationId": "e"}),
                    request(40, "elicitation/create", ELICIT)]
        return legacy(lambda message, run: [_answer_list(message)] if message.get("method") == "tools/list" else [],
                      init)(message, run)

    for run in both(script, _listed):  # when the answer is written among the client's own requests is a scheduling
        answers = [line for line in run.received if "method" not in line]  # detail: only its content and that
        assert answers == [{"jsonrpc": "2.0", "id": 40, **_refused(-32601, "Method not found", "elicitation/create")}]
        methods = [line.get("method") for line in run.received]  # `initialized` went out first are compared
        assert methods.index("notifications/initialized") < methods.index(None), run.name
        assert run.outcome[0] == "returned" and run.events == ["listed"], run.name


@pytest.mark.parametrize("era", ERAS)
def test_16_a_notification_nested_deeper_than_pydantic_dumps_reaches_the_handler(era: str) -> None:
    """A valid notifications/message whose data is nested 400 levels deep is handed on like any other (the
    scan's notification log records it with its preview capped)."""
    def notifying(message: dict[str, Any], run: Run) -> list[Any]:
        if message.get("method") != "tools/list":
            return []
        return [notification("notifications/message", {"level": "info", "data": DEEP}), _answer_list(message)]

    sdk = same(_era(era, notifying), _listed)
    assert sdk.outcome[0] == "returned"
    assert sdk.events == [("notified", "notifications/message", "too deep to dump"), "listed"]
