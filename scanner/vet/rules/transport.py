"""SSE_TRANSPORT_DEPRECATED: the HTTP+SSE transport, Deprecated by 2026-07-28 (SEP-2596). The SDK classes and module
paths name MCP themselves (high, ungated); the generic helper names, a `transport: 'sse'` option and the hand-rolled
two-endpoint shape count only in a file that talks MCP. `text/event-stream` alone never fires: Streamable HTTP
answers a POST with an SSE body too."""

from __future__ import annotations

import re
from collections.abc import Iterator

from scanner.vet.facts import FileFacts
from scanner.vet.model import Hit, ParsedFile

CLASSES = frozenset({"sseservertransport", "sseclienttransport"})
MODULE_PATHS = ("@modelcontextprotocol/sdk/server/sse", "@modelcontextprotocol/sdk/client/sse",
                "@modelcontextprotocol/server-legacy/sse", "mcp.server.sse", "mcp.client.sse")
HELPERS = frozenset({"sse_client", "sse_app", "connect_sse", "handle_post_message"})
ENDPOINT_EVENT = re.compile(r"event:\s*endpoint")


def _symbol_hit(token_kind: str, lower: str) -> bool:
    if token_kind not in ("name", "string"):
        return False
    return lower.replace("-", "").replace("_", "") in CLASSES or any(
        lower == path or lower.startswith(path + ".") or lower.startswith(path + "/") for path in MODULE_PATHS)


def sse_transport_deprecated(parsed: ParsedFile, facts: FileFacts) -> Iterator[Hit]:
    """SDK SSE classes/modules (high); in an MCP file: helpers (medium), `transport: 'sse'` (high; another
    transport-named key: medium), and the GET-stream + `event: endpoint` pair (medium, at the endpoint write)."""
    event_stream, endpoint_writes = False, []
    for token in parsed.tokens:
        lower = token.value.lower()
        if _symbol_hit(token.kind, lower):
            yield Hit("SSE_TRANSPORT_DEPRECATED", token, "high")
        elif facts.mcp_context and token.kind == "name" and lower in HELPERS:
            yield Hit("SSE_TRANSPORT_DEPRECATED", token, "medium")
        if facts.mcp_context and token.has("transport_sse"):
            yield Hit("SSE_TRANSPORT_DEPRECATED", token, "high" if lower == "transport" else "medium")
        if token.kind == "string" and "text/event-stream" in lower:
            event_stream = True
        if token.kind == "string" and ENDPOINT_EVENT.search(token.value) or token.has("sse_endpoint_event"):
            endpoint_writes.append(token)
    if facts.mcp_context and event_stream and endpoint_writes:
        yield Hit("SSE_TRANSPORT_DEPRECATED", endpoint_writes[0], "medium")


RULES = {"SSE_TRANSPORT_DEPRECATED": sse_transport_deprecated}
