"""INITIALIZE_HANDLER: the initialize / notifications/initialized handshake, removed in 2026-07-28."""

from __future__ import annotations

from collections.abc import Iterator

from scanner.vet.facts import FileFacts
from scanner.vet.model import Hit, ParsedFile

METHODS = frozenset({"initialize", "notifications/initialized"})
SCHEMA_CONSTANTS = frozenset({"InitializeRequestSchema", "InitializedNotificationSchema"})


def initialize_handler(parsed: ParsedFile, facts: FileFacts) -> Iterator[Hit]:
    """The method string in a registration position (high) or elsewhere in an MCP file (low); the SDK schema
    constants (high)."""
    for token in parsed.tokens:
        if token.kind == "string" and token.value in METHODS:
            if token.has("registration"):
                yield Hit("INITIALIZE_HANDLER", token, "high")
            elif facts.mcp_context:
                yield Hit("INITIALIZE_HANDLER", token, "low")
        elif token.kind == "name" and token.value in SCHEMA_CONSTANTS:
            yield Hit("INITIALIZE_HANDLER", token, "high")


RULES = {"INITIALIZE_HANDLER": initialize_handler}
