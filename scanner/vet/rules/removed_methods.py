"""The methods and surfaces the 2026-07-28 changelog removes outright: ping (only where it is registered as a method),
resources/subscribe, notifications/roots/list_changed, logging/setLevel, SSE resumability (gated on MCP context) and
the elicitation completion signal."""

from __future__ import annotations

from collections.abc import Iterator

from scanner.vet.facts import FileFacts
from scanner.vet.model import Hit, ParsedFile
from scanner.vet.rules.method_strings import method_rule

PING_CONSTANTS = frozenset({"PingRequestSchema", "PingRequest"})
PING_SDK_CALLS = frozenset({"send_ping", "on_ping"})  # not TypeScript's bare `.ping()`: redis and others have one
RESUMABILITY = frozenset({"lasteventid", "eventstore", "resumptiontoken", "onresumptiontoken"})
ELICITATION_FIELDS = frozenset({"elicitationId", "elicitation_id"})


def ping_removed(parsed: ParsedFile, facts: FileFacts) -> Iterator[Hit]:
    """`ping` only as a registered method (never a tool name or a `/ping` route); the SDK ping types; in an MCP
    file, the Python SDK's send_ping() and Server(on_ping=…)."""
    for token in parsed.tokens:
        sdk_call = token.value in PING_SDK_CALLS and (token.has("method_call") or token.has("kwarg"))
        if token.kind == "string" and token.value == "ping" and token.has("registration") or \
                token.kind == "name" and token.value in PING_CONSTANTS or sdk_call and facts.mcp_context:
            yield Hit("PING_REMOVED", token, "high")


def sse_resumability_removed(parsed: ParsedFile, facts: FileFacts) -> Iterator[Hit]:
    """Last-Event-ID / eventStore / resumption tokens: high when handed to a transport, else only in an MCP file."""
    for token in parsed.tokens:
        if token.kind == "number" or token.value.lower().replace("-", "").replace("_", "") not in RESUMABILITY:
            continue
        if token.has("transport_ctx"):
            yield Hit("SSE_RESUMABILITY_REMOVED", token, "high")
        elif facts.mcp_context:
            header = token.kind == "string" and token.value.lower() == "last-event-id"
            yield Hit("SSE_RESUMABILITY_REMOVED", token, "high" if header else "medium")


def elicitation_complete_removed(parsed: ParsedFile, facts: FileFacts) -> Iterator[Hit]:
    """The notification string (high); the elicitationId field (medium: the name could be the app's own)."""
    for token in parsed.tokens:
        if token.kind == "string" and token.value == "notifications/elicitation/complete":
            yield Hit("ELICITATION_COMPLETE_REMOVED", token, "high")
        elif token.kind in ("key", "name") and token.value in ELICITATION_FIELDS:
            yield Hit("ELICITATION_COMPLETE_REMOVED", token, "medium")


RULES = {
    "PING_REMOVED": ping_removed,
    "RESOURCE_SUBSCRIBE_REMOVED": method_rule(
        "RESOURCE_SUBSCRIBE_REMOVED", frozenset({"resources/subscribe", "resources/unsubscribe"}),
        frozenset({"SubscribeRequestSchema", "UnsubscribeRequestSchema"}),
        frozenset({"subscribe_resource", "unsubscribe_resource", "on_subscribe_resource", "on_unsubscribe_resource",
                   "subscribeResource", "unsubscribeResource"})),
    "ROOTS_LIST_CHANGED_REMOVED": method_rule(
        "ROOTS_LIST_CHANGED_REMOVED", frozenset({"notifications/roots/list_changed"}),
        frozenset({"RootsListChangedNotificationSchema"}),
        frozenset({"send_roots_list_changed", "on_roots_list_changed", "sendRootsListChanged"})),
    "LOGGING_SETLEVEL_REMOVED": method_rule(
        "LOGGING_SETLEVEL_REMOVED", frozenset({"logging/setLevel"}), frozenset({"SetLevelRequestSchema"}),
        frozenset({"set_logging_level", "on_set_logging_level", "setLoggingLevel"})),
    "SSE_RESUMABILITY_REMOVED": sse_resumability_removed,
    "ELICITATION_COMPLETE_REMOVED": elicitation_complete_removed,
}
