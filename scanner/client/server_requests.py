"""What the scan's client answers a request the server sends it, as the MCP SDK's client with no callbacks answers
(docs/own-client.md §4): at a handshake-era version `ping` is answered, roots, sampling and elicitation are refused
as not supported (-32600), a known request with params its revision rejects is -32602, anything else -32601; at
2026-07-28 a server sends no requests, so every one is -32601. The id is echoed as it came."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import mcp_types
from pydantic import BaseModel, ValidationError

from scanner.client.surface import is_modern, revision

# method -> (surface model, the version-free model, the refusal's message (None: answered), the first revision)
_KNOWN: dict[str, tuple[str, type[BaseModel], str | None, str]] = {
    "ping": ("PingRequest", mcp_types.PingRequest, None, "2024-11-05"),
    "roots/list": ("ListRootsRequest", mcp_types.ListRootsRequest, "List roots not supported", "2024-11-05"),
    "sampling/createMessage": ("CreateMessageRequest", mcp_types.CreateMessageRequest, "Sampling not supported",
                               "2024-11-05"),
    "elicitation/create": ("ElicitRequest", mcp_types.ElicitRequest, "Elicitation not supported", "2025-06-18"),
}


def refusal(method: str) -> str:
    """What this client says when asked for `method` (roots, sampling, elicitation: it offers none)."""
    known = _KNOWN.get(method)
    return known[2] if known is not None and known[2] is not None else "Method not found"


def answerer(version: Callable[[], str]) -> Callable[[mcp_types.JSONRPCRequest], mcp_types.JSONRPCMessage]:
    """The answers at the session's negotiated version (`version()` is read when each request comes)."""
    return lambda request: answer(request, version())


def answer(request: mcp_types.JSONRPCRequest, version: str) -> mcp_types.JSONRPCMessage:
    known = _KNOWN.get(request.method)
    if is_modern(version) or known is None or version < known[3]:
        return _error(request, mcp_types.METHOD_NOT_FOUND, "Method not found", request.method)
    surface_name, model, refusal, _ = known
    # the request as it came (not dumped again: a dump would drop its nulls, and refuse params nested very deep),
    # checked by its revision's model and then the version-free one, as the SDK's client parses it
    body: dict[str, Any] = {"method": request.method}
    if request.params is not None:
        body["params"] = request.params
    try:
        getattr(revision(version), surface_name).model_validate({"jsonrpc": "2.0", "id": 0, **body}, by_name=False)
        model.model_validate(body, by_name=False)
    except ValidationError:
        return _error(request, mcp_types.INVALID_PARAMS, "Invalid request parameters", "")
    if refusal is not None:
        return _error(request, mcp_types.INVALID_REQUEST, refusal, None)
    return mcp_types.JSONRPCResponse(jsonrpc="2.0", id=request.id, result={})


def _error(request: mcp_types.JSONRPCRequest, code: int, message: str, data: str | None) -> mcp_types.JSONRPCError:
    error = mcp_types.ErrorData(code=code, message=message, **({} if data is None else {"data": data}))
    return mcp_types.JSONRPCError(jsonrpc="2.0", id=request.id, error=error)
