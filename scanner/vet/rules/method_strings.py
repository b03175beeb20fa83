"""The shape most protocol rules share: a method string literal or an SDK schema constant that names a method the
2026-07-28 revision changes or removes. One factory, so each such rule is one line of data."""

from __future__ import annotations

from collections.abc import Callable, Iterator

from scanner.vet.facts import FileFacts
from scanner.vet.model import Hit, ParsedFile

RuleFunction = Callable[[ParsedFile, FileFacts], Iterator[Hit]]


def method_rule(rule_id: str, methods: frozenset[str], constants: frozenset[str] = frozenset(),
                sdk_calls: frozenset[str] = frozenset()) -> RuleFunction:
    """A rule that fires (high) on an exact method string or an SDK constant name (aliases resolved by the parser),
    and, in a file that talks MCP, on `sdk_calls`: the SDK's own way to send or register the method, a method call
    (`@server.subscribe_resource()`, `client.setLoggingLevel()`) or a keyword argument (`Server(on_ping=…)`)."""
    def find(parsed: ParsedFile, facts: FileFacts) -> Iterator[Hit]:
        for token in parsed.tokens:
            if token.kind == "string" and token.value in methods or token.kind == "name" and token.value in constants:
                yield Hit(rule_id, token, "high")
            elif token.value in sdk_calls and (token.has("method_call") or token.has("kwarg")) and facts.mcp_context:
                yield Hit(rule_id, token, "high")
    find.__doc__ = (f"{rule_id}: the method strings {sorted(methods)}, the SDK constants {sorted(constants)} or, "
                    f"in an MCP file, the SDK calls {sorted(sdk_calls)}.")
    find.__name__ = rule_id.lower()
    return find
