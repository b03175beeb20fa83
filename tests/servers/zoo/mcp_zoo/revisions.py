"""Two servers for the conformance checks (rules W*), one per side of the 2026-07-28 revision.

zoo-revision-2026 serves both revisions the way the rollout matrix asks: a request whose `_meta` names
io.modelcontextprotocol/protocolVersion is answered statelessly as 2026-07-28 (server/discover, resultType, ttlMs and
cacheScope on every result, -32602 for a missing resource, -32022 for a version it does not serve, -32601 for ping
and initialize); anything else is the 2025-11-25 protocol with its handshake. Its schemas are JSON Schema 2020-12.

zoo-revision-legacy is a 2025-11-25 server that insists on the handshake (a request before initialize is refused
"Server not initialized"), has no server/discover, answers a missing resource with -32002, logs to the client after
the handshake, and writes its schemas in draft-07 (`$schema`, `definitions` and a `#/definitions/` ref).
"""

from __future__ import annotations

import json
import sys
from collections.abc import Callable
from typing import Any

from mcp_zoo.protocol import text_result, tool

NEXT, CURRENT = "2026-07-28", "2025-11-25"
VERSION_KEY = "io.modelcontextprotocol/protocolVersion"
SERVER_INFO_KEY = "io.modelcontextprotocol/serverInfo"
RESOURCE = {"uri": "zoo://notes/welcome", "name": "welcome", "mimeType": "text/plain"}

ECHO_2020 = tool("echo_text", "Return the given text unchanged, so a client can check the round trip works end to end.",
                 {"text": {"type": "string", "description": "The text to send back."},
                  "repeat": {"type": "integer", "exclusiveMinimum": 0, "description": "How many times to repeat it."}})
ECHO_DRAFT7 = {
    "name": "echo_text", "description": "Return the given text unchanged, so a client can check the round trip works.",
    "inputSchema": {"$schema": "http://json-schema.org/draft-07/schema#", "type": "object",
                    "properties": {"text": {"type": "string", "description": "The text to send back."}}},
}
LOOKUP_DRAFT7 = {
    "name": "lookup_note", "description": "Return the note stored under a key, or say there is none.",
    "inputSchema": {"type": "object", "definitions": {"key": {"type": "string", "description": "A note's key."}},
                    "properties": {"key": {"$ref": "#/definitions/key"},
                                   # An enum value named like the keyword: data, not a schema (must not count).
                                   "kind": {"type": "string", "enum": ["definitions", "items"]}}},
}


class RpcError(Exception):
    def __init__(self, code: int, message: str, data: Any = None) -> None:
        super().__init__(message)
        self.code, self.data = code, data


def _call(params: dict[str, Any]) -> dict[str, Any]:
    arguments = params.get("arguments") if isinstance(params.get("arguments"), dict) else {}
    if params.get("name") == "echo_text":
        return text_result(str(arguments.get("text", "")))
    if params.get("name") == "lookup_note":
        return text_result(f"no note under {arguments.get('key')!r}")
    raise RpcError(-32602, f"unknown tool: {params.get('name')}")


def _read(params: dict[str, Any], missing_code: int) -> dict[str, Any]:
    if params.get("uri") != RESOURCE["uri"]:
        raise RpcError(missing_code, "Resource not found", {"uri": params.get("uri")})
    return {"contents": [{"uri": RESOURCE["uri"], "mimeType": "text/plain", "text": "Welcome."}]}


def _write(message: dict[str, Any]) -> None:
    sys.stdout.write(json.dumps(message) + "\n")
    sys.stdout.flush()


def _serve(answer: Callable[[str, dict[str, Any]], Any]) -> None:
    for line in sys.stdin:
        if not line.strip():
            continue
        message = json.loads(line)
        method, params = message.get("method", ""), message.get("params") or {}
        if "id" not in message:
            answer(method, params) if method.startswith("notifications/") else None
            continue
        try:
            _write({"jsonrpc": "2.0", "id": message["id"], "result": answer(method, params)})
        except RpcError as exc:
            error = {"code": exc.code, "message": str(exc), **({"data": exc.data} if exc.data is not None else {})}
            _write({"jsonrpc": "2.0", "id": message["id"], "error": error})


class DualRevision:
    """zoo-revision-2026: stateless 2026-07-28 when a request's _meta names a version, 2025-11-25 otherwise."""

    tools = [ECHO_2020]
    capabilities = {"tools": {"listChanged": False}, "resources": {}}

    def answer(self, method: str, params: dict[str, Any]) -> Any:
        meta = params.get("_meta") if isinstance(params.get("_meta"), dict) else {}
        if VERSION_KEY in meta:
            return self.modern(method, params, meta[VERSION_KEY])
        return self.legacy(method, params)

    def modern(self, method: str, params: dict[str, Any], version: Any) -> Any:
        if version != NEXT:
            raise RpcError(-32022, "Unsupported protocol version", {"supported": [NEXT, CURRENT], "requested": version})
        cacheable = {"resultType": "complete", "ttlMs": 0, "cacheScope": "private",
                     "_meta": {SERVER_INFO_KEY: {"name": "zoo-revision-2026", "version": "0.1.0"}}}
        if method == "server/discover":
            return {"supportedVersions": [NEXT, CURRENT], "capabilities": self.capabilities, **cacheable}
        if method == "tools/list":
            return {"tools": self.tools, **cacheable}
        if method == "resources/list":
            return {"resources": [RESOURCE], **cacheable}
        if method == "resources/templates/list":
            return {"resourceTemplates": [], **cacheable}
        if method == "resources/read":
            return {**_read(params, -32602), "resultType": "complete"}
        if method == "tools/call":
            return {**_call(params), "resultType": "complete"}
        raise RpcError(-32601, f"Method not found: {method}")  # ping and initialize are gone in 2026-07-28

    def legacy(self, method: str, params: dict[str, Any]) -> Any:
        if method == "initialize":
            return {"protocolVersion": CURRENT, "capabilities": self.capabilities,
                    "serverInfo": {"name": "zoo-revision-2026", "version": "0.1.0"}}
        handlers: dict[str, Callable[[], Any]] = {
            "ping": lambda: {}, "tools/list": lambda: {"tools": self.tools},
            "resources/list": lambda: {"resources": [RESOURCE]},
            "resources/templates/list": lambda: {"resourceTemplates": []},
            "resources/read": lambda: _read(params, -32002), "tools/call": lambda: _call(params),
            "notifications/initialized": lambda: None,
        }
        if method not in handlers:
            raise RpcError(-32601, f"Method not found: {method}")
        return handlers[method]()


class HandshakeOnly:
    """zoo-revision-legacy: 2025-11-25 only, and nothing before initialize."""

    tools = [ECHO_DRAFT7, LOOKUP_DRAFT7]

    def __init__(self) -> None:
        self.initialized = False

    def answer(self, method: str, params: dict[str, Any]) -> Any:
        if method == "initialize":
            self.initialized = True
            return {"protocolVersion": CURRENT, "serverInfo": {"name": "zoo-revision-legacy", "version": "0.1.0"},
                    "capabilities": {"tools": {}, "resources": {}, "logging": {}}}
        if method == "notifications/initialized":
            _write({"jsonrpc": "2.0", "method": "notifications/message",
                    "params": {"level": "info", "logger": "zoo", "data": "ready"}})
            return None
        if not self.initialized:
            raise RpcError(-32600, "Server not initialized")
        handlers: dict[str, Callable[[], Any]] = {
            "ping": lambda: {}, "tools/list": lambda: {"tools": self.tools},
            "resources/list": lambda: {"resources": [RESOURCE]},
            "resources/templates/list": lambda: {"resourceTemplates": []},
            "resources/read": lambda: _read(params, -32002), "tools/call": lambda: _call(params),
        }
        if method not in handlers:
            raise RpcError(-32601, f"Method not found: {method}")
        return handlers[method]()


def revision_2026() -> None:
    _serve(DualRevision().answer)


def revision_legacy() -> None:
    _serve(HandshakeOnly().answer)
