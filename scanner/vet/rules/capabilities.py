"""ROOTS_CAP, SAMPLING_CAP, LOGGING_CAP and INCLUDE_CONTEXT_VALUES: the features 2026-07-28 deprecates. A capability
key structurally inside a capabilities object is high confidence, one only near a `capabilities` mention medium; the
features' method strings, SDK schema constants and the Python SDK's capability constructors are high."""

from __future__ import annotations

from collections.abc import Callable, Iterator

from scanner.vet.facts import FileFacts
from scanner.vet.model import Hit, ParsedFile
from scanner.vet.shapes import INCLUDE_CONTEXT_VALUES

RuleFunction = Callable[[ParsedFile, FileFacts], Iterator[Hit]]


def _capability_rule(rule_id: str, key: str, method: str, names: frozenset[str],
                     sdk_methods: frozenset[str]) -> RuleFunction:
    def find(parsed: ParsedFile, facts: FileFacts) -> Iterator[Hit]:
        for token in parsed.tokens:
            if token.kind == "string" and token.value == method or token.kind == "name" and token.value in names:
                yield Hit(rule_id, token, "high")
            elif token.has("method_call") and token.value in sdk_methods and facts.mcp_context:
                yield Hit(rule_id, token, "high")
            elif token.kind in ("key", "string") and token.value == key:
                if token.has("in_capabilities"):
                    yield Hit(rule_id, token, "high")
                elif token.kind == "key" and facts.near_capabilities(token.line):
                    yield Hit(rule_id, token, "medium")
    find.__doc__ = (f"{rule_id}: a `{key}` capability key, the method {method!r}, {sorted(names)}, or a call of the "
                    f"SDK's {sorted(sdk_methods)} in an MCP file.")
    find.__name__ = rule_id.lower()
    return find


def include_context_values(parsed: ParsedFile, facts: FileFacts) -> Iterator[Hit]:
    """'thisServer' / 'allServers' as the value of an includeContext key or keyword (high, at the key), elsewhere
    within five lines of an includeContext mention (medium)."""
    keyed = {t.line for t in parsed.tokens if t.has("include_context")}
    for token in parsed.tokens:
        if token.has("include_context"):
            yield Hit("INCLUDE_CONTEXT_VALUES", token, "high")
        elif token.kind == "string" and token.value in INCLUDE_CONTEXT_VALUES and token.line not in keyed \
                and facts.near_include_context(token.line):
            yield Hit("INCLUDE_CONTEXT_VALUES", token, "medium")


RULES = {
    "ROOTS_CAP": _capability_rule("ROOTS_CAP", "roots", "roots/list",
                                  frozenset({"ListRootsRequestSchema", "RootsCapability"}),
                                  frozenset({"listRoots", "list_roots"})),
    "SAMPLING_CAP": _capability_rule("SAMPLING_CAP", "sampling", "sampling/createMessage",
                                     frozenset({"CreateMessageRequestSchema", "SamplingCapability"}),
                                     frozenset({"createMessage", "create_message"})),
    "LOGGING_CAP": _capability_rule("LOGGING_CAP", "logging", "notifications/message",
                                    frozenset({"LoggingMessageNotificationSchema", "LoggingCapability"}),
                                    frozenset({"sendLoggingMessage", "send_log_message"})),
    "INCLUDE_CONTEXT_VALUES": include_context_values,
}
