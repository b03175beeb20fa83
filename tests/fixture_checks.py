"""Checks of a rendered fixture (the JSON document `mcp-sandbox fixtures` writes), for tests/test_fixtures*.py:
is every message JSON-RPC 2.0, and does any answer contradict what the W rules of scanner/conformance check?"""

from __future__ import annotations

from typing import Any

from scanner.conformance.revision_details import PRE_FINAL_CODES, _cacheable
from scanner.fixtures import methods
from scanner.fixtures.wire import (LOG_LEVEL_KEY, PROTOCOL_VERSION_KEY, REVISION, SUBSCRIPTION_ID_KEY, TASKS_EXTENSION,
                                   TO_CLIENT, TO_SERVER, CLIENT_CAPABILITIES_KEY)

Doc = dict[str, Any]
RESULT_TYPES = ("complete", "input_required")  # what the corpus's core answers use ("task": the tasks extension)
TAGGED = {"notifications/subscriptions/acknowledged", "notifications/tools/list_changed",
          "notifications/prompts/list_changed", "notifications/resources/list_changed",
          "notifications/resources/updated"}


def _is_id(value: Any) -> bool:
    return isinstance(value, str) or (isinstance(value, int) and not isinstance(value, bool))


def _message_problems(message: Any, direction: str) -> list[str]:
    if not isinstance(message, dict) or message.get("jsonrpc") != "2.0":
        return ["not a JSON-RPC 2.0 object"]
    if "method" in message:
        problems = [] if isinstance(message["method"], str) else ["method is not a string"]
        if "id" in message and not _is_id(message["id"]):
            problems.append("request id is not a string or an integer")
        if "params" in message and not isinstance(message["params"], dict):
            problems.append("params is not an object")
        return problems + [f"unexpected member {key}" for key in set(message) - {"jsonrpc", "id", "method", "params"}]
    if direction == TO_SERVER:
        return ["a client sends no responses in 2026-07-28 (there are no server requests to answer)"]
    if ("result" in message) == ("error" in message):
        return ["a response has exactly one of result and error"]
    error = message.get("error")
    if error is not None and not (isinstance(error, dict) and isinstance(error.get("code"), int)
                                  and isinstance(error.get("message"), str)):
        return ["error without an integer code and a message"]
    if "result" in message and not isinstance(message["result"], dict):
        return ["result is not an object"]
    return [] if _is_id(message.get("id")) or (error is not None and message.get("id") is None) else ["bad id"]


def jsonrpc_problems(document: Doc) -> list[str]:
    problems: list[str] = []
    sent_ids: list[Any] = []
    for index, exchange in enumerate(document["exchanges"], 1):
        where = f"{document['fixture']} step {index}"
        if exchange["step"] != index or exchange["direction"] not in (TO_SERVER, TO_CLIENT) or not exchange["expect"]:
            problems.append(f"{where}: step, direction or expect text wrong")
        message = exchange["message"]
        if message is None:
            if exchange["direction"] != TO_CLIENT or "http" not in exchange:
                problems.append(f"{where}: only an HTTP answer may carry no JSON-RPC message")
            continue
        problems += [f"{where}: {problem}" for problem in _message_problems(message, exchange["direction"])]
        if exchange["direction"] == TO_SERVER and "id" in message:
            if message["id"] in sent_ids:
                problems.append(f"{where}: request id {message['id']} reused (a retry is a new request)")
            sent_ids.append(message["id"])
        elif exchange["direction"] == TO_CLIENT and "method" not in message and message.get("id") not in sent_ids:
            problems.append(f"{where}: a response to no request sent")
    return problems


def pairs(document: Doc) -> list[tuple[Doc, Doc]]:
    """(client request exchange, server response exchange) by id, in order."""
    found = []
    open_requests: dict[Any, Doc] = {}
    for exchange in document["exchanges"]:
        message = exchange["message"]
        if message is None:
            continue
        if exchange["direction"] == TO_SERVER and "id" in message:
            open_requests[message["id"]] = exchange
        elif exchange["direction"] == TO_CLIENT and "method" not in message and message.get("id") in open_requests:
            found.append((open_requests.pop(message["id"]), exchange))
    return found


def _meta(message: Doc) -> Doc:
    meta = (message.get("params") or {}).get("_meta")
    return meta if isinstance(meta, dict) else {}


def _answer_problems(request: Doc, reply: Doc) -> list[str]:
    method, meta = request["method"], _meta(request)
    if PROTOCOL_VERSION_KEY not in meta:
        return []  # a 2025-11-25 request (initialize): the 2026-07-28 rules do not judge its answer
    if "error" in reply:
        code = reply["error"]["code"]
        return ([f"W9: pre-final code {code} (2026-07-28: {PRE_FINAL_CODES[code]})"] if code in PRE_FINAL_CODES else
                ["W4: -32002 is removed (2026-07-28: -32602)"] if code == -32002 else [])
    if meta[PROTOCOL_VERSION_KEY] != REVISION:
        return [f"a result to a request declaring {meta[PROTOCOL_VERSION_KEY]!r} (must be -32022)"]
    result = reply["result"]
    kinds = set(RESULT_TYPES)
    if method == "tools/call" and TASKS_EXTENSION in meta.get(CLIENT_CAPABILITIES_KEY, {}).get("extensions", {}):
        kinds.add("task")
    problems = [] if result.get("resultType") in kinds else [f"W7: {method} answered resultType "
                                                             f"{result.get('resultType')!r}"]
    if result.get("resultType") == "input_required" and method not in methods.INPUT_REQUIRED_ALLOWED:
        problems.append(f"input_required on {method}, which may not ask")
    if method in methods.CACHEABLE and result.get("resultType") == "complete" and not _cacheable(result):
        problems.append(f"W8: {method} without ttlMs/cacheScope")
    if method in methods.REMOVED:
        problems.append(f"{'W10' if method == 'ping' else methods.REMOVED[method]}: removed {method} answered")
    return problems


def _stream_problems(document: Doc) -> list[str]:
    """What the server sends unasked: no requests (W11/W12), log lines only for a request that asked (W13),
    change notifications tagged with an open subscription."""
    problems: list[str] = []
    open_ids: dict[Any, Doc] = {}
    for exchange in document["exchanges"]:
        message = exchange["message"]
        if message is None:
            continue
        method = message.get("method")
        if exchange["direction"] == TO_SERVER:
            if "id" in message:
                open_ids[message["id"]] = message
            continue
        if method is None:
            open_ids.pop(message.get("id"), None)
        elif "id" in message:
            problems.append(f"W11/W12: the server sent the request {method} (2026-07-28: inputRequests instead)")
        elif method == "notifications/message" and not any(LOG_LEVEL_KEY in _meta(sent) for sent in open_ids.values()):
            problems.append("W13: notifications/message for no open request that set a logLevel")
        elif method in TAGGED:
            tag = _meta(message).get(SUBSCRIPTION_ID_KEY)
            if open_ids.get(tag, {}).get("method") != "subscriptions/listen":
                problems.append(f"{method} not tagged with an open subscriptions/listen id")
    return problems


def contradictions(document: Doc) -> list[str]:
    problems = [f"{document['fixture']}: {problem}" for request, reply in pairs(document)
                for problem in _answer_problems(request["message"], reply["message"])]
    return problems + [f"{document['fixture']}: {problem}" for problem in _stream_problems(document)]
