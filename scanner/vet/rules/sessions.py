"""MCP_SESSION_ID: the Mcp-Session-Id header and protocol-level sessions, removed in 2026-07-28."""

from __future__ import annotations

from collections.abc import Iterator

from scanner.vet.facts import FileFacts
from scanner.vet.model import Hit, ParsedFile

HEADER_FORMS = ("mcp-session-id", "mcpsessionid")


def mcp_session_id(parsed: ParsedFile, facts: FileFacts) -> Iterator[Hit]:
    """The header or an mcpSessionId name (high); a real sessionIdGenerator, a client transport given or read for
    its sessionId (medium). `sessionIdGenerator: undefined` and `session_id=None` are the migrated forms."""
    for token in parsed.tokens:
        lower = token.value.lower()
        if token.kind != "number" and any(form in lower for form in HEADER_FORMS):
            yield Hit("MCP_SESSION_ID", token, "high")
        elif token.kind == "key" and token.value == "sessionIdGenerator" and not token.has("benign") \
                and parsed.language != "python":
            yield Hit("MCP_SESSION_ID", token, "medium")
        elif token.has("client_session") and not token.has("benign"):
            yield Hit("MCP_SESSION_ID", token, "medium")


RULES = {"MCP_SESSION_ID": mcp_session_id}
