"""Replay: every client→server message of the `stateless/` fixtures goes to a tiny in-process 2026-07-28 reference
server written from the specification (not from the fixtures), and what it sends back must match the fixture's
server→client messages in kind: the same notifications, error codes, resultType and result members."""

from __future__ import annotations

from typing import Any

import pytest

from scanner.fixtures import methods
from scanner.fixtures.catalogue import all_fixtures
from scanner.fixtures.wire import (CLIENT_CAPABILITIES_KEY, LOG_LEVEL_KEY, PROTOCOL_VERSION_KEY, REVISION, TO_CLIENT,
                                   TO_SERVER)

Msg = dict[str, Any]
SUPPORTED = [REVISION, "2025-11-25"]


def _error(message: Msg, code: int, data: Any = None) -> Msg:
    return {"id": message.get("id"), "error": {"code": code, **({"data": data} if data is not None else {})}}


def _complete(message: Msg, **body: Any) -> Msg:
    return {"id": message["id"], "result": {"resultType": "complete", **body}}


def reference(message: Msg) -> list[Msg]:
    """What a 2026-07-28-only reference server sends for one client message, in order."""
    if "id" not in message:
        return []
    params = message.get("params") or {}
    meta = params.get("_meta") or {}
    if PROTOCOL_VERSION_KEY not in meta or CLIENT_CAPABILITIES_KEY not in meta:
        return [_error(message, -32601 if message["method"] == "initialize" else -32602)]
    if meta[PROTOCOL_VERSION_KEY] not in SUPPORTED:
        return [_error(message, -32022, {"supported": SUPPORTED, "requested": meta[PROTOCOL_VERSION_KEY]})]
    method, cache = message["method"], {"ttlMs": 0, "cacheScope": "private"}
    if method == "server/discover":
        return [_complete(message, supportedVersions=SUPPORTED, capabilities={}, serverInfo={}, **cache)]
    if method == "tools/list":
        return [_complete(message, tools=[], **cache)]
    if method == "resources/read":
        return [_complete(message, contents=[], **cache)]
    if method == "tools/call" and params.get("name") == "delete_order":
        if "elicitation" not in meta[CLIENT_CAPABILITIES_KEY]:
            return [_error(message, -32021, {"requiredCapabilities": {"elicitation": {}}})]
    if method == "tools/call":
        logs = [{"method": "notifications/message"}] if LOG_LEVEL_KEY in meta else []
        return [*logs, _complete(message, content=[], isError=False)]
    return [_error(message, -32601)]


def _kind(message: Msg) -> tuple[Any, ...]:
    if "method" in message:
        return ("notification", message["method"])
    if "error" in message:
        return ("error", message.get("id"), message["error"]["code"])
    result = message["result"]
    return ("result", message["id"], result.get("resultType"), tuple(sorted(set(result) - {"_meta"})))


STATELESS = [fixture for fixture in all_fixtures() if fixture.set == "stateless"]


@pytest.mark.parametrize("fixture", STATELESS, ids=[fixture.path for fixture in STATELESS])
def test_the_reference_server_answers_as_the_fixture_says(fixture: Any) -> None:
    exchanges = fixture.as_json()["exchanges"]
    expected = [_kind(e["message"]) for e in exchanges if e["direction"] == TO_CLIENT]
    got = [_kind(m) for e in exchanges if e["direction"] == TO_SERVER for m in reference(e["message"])]
    assert got == expected


def test_the_reference_refuses_what_the_revision_removed() -> None:
    """A near miss: the reference is not a mirror of the fixtures (it refuses every removed method)."""
    meta = {PROTOCOL_VERSION_KEY: REVISION, CLIENT_CAPABILITIES_KEY: {}}
    for method in methods.REMOVED:
        answer = reference({"jsonrpc": "2.0", "id": 1, "method": method, "params": {"_meta": meta}})
        assert _kind(answer[0]) == ("error", 1, -32601), method
