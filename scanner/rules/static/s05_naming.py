"""S5 tool-naming: spec-conformant names, generic names, mixed styles, service prefixes."""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Iterator

from scanner.report.model import Finding
from scanner.rules.registry import rule
from scanner.rules.static.context import LintContext, ToolView
from scanner.vocabulary import ALL_GROUPED_VERBS

RULE = rule("S5")

SPEC_NAME = re.compile(r"^[A-Za-z0-9._-]{1,128}$")  # MCP SEP-986
GENERIC_NAMES = frozenset({"do_it", "doit", "do", "helper", "tool", "utility", "util", "utils", "misc", "action",
                           "process", "handler", "handle", "run", "execute", "exec", "main", "function", "func",
                           "test", "stuff", "thing", "generic", "default", "call", "invoke"})

MIN_TOOLS_FOR_PREFIX = 3
PREFIX_SHARE = 0.6


# Naming styles, tried in this order; a one-word name (None) fits any style.
_STYLES: tuple[tuple[str | None, re.Pattern[str]], ...] = tuple((style, re.compile(pattern)) for style, pattern in (
    (None, r"[a-z0-9]+|[A-Z0-9]+"),
    ("snake_case", r"[a-z0-9]+(_[a-z0-9]+)+"),
    ("kebab-case", r"[a-z0-9]+(-[a-z0-9]+)+"),
    ("dot.case", r"[a-z0-9]+(\.[a-z0-9]+)+"),
    ("SCREAMING_CASE", r"[A-Z0-9_]+"),
    ("camelCase", r"[a-z][a-zA-Z0-9]*"),
    ("PascalCase", r"[A-Z][a-zA-Z0-9]*"),
))


def _style(name: str) -> str | None:
    """Naming style of a multi-word name; None for one-word names, which fit any style."""
    return next((style for style, pattern in _STYLES if pattern.fullmatch(name)), "mixed")


def _spec_findings(tools: list[ToolView]) -> Iterator[Finding]:
    for tool in tools:
        if not tool.name_is_string:
            yield RULE.finding(tool.name, "tool has no name (or it is not a string)", severity="error")
        elif not SPEC_NAME.fullmatch(tool.name):
            reason = "longer than 128 characters" if len(tool.name) > 128 else "characters outside A-Z a-z 0-9 _ - ."
            yield RULE.finding(tool.name, f"name does not follow the MCP spec: {reason}", evidence=tool.name[:160])


def _generic_findings(tools: list[ToolView]) -> Iterator[Finding]:
    for tool in tools:
        if tool.name_is_string and ("_".join(tool.tokens) in GENERIC_NAMES or tool.name.lower() in GENERIC_NAMES):
            yield RULE.finding(tool.name, "generic tool name says nothing about what it does", evidence=tool.name)


def _style_findings(tools: list[ToolView]) -> Iterator[Finding]:
    styles = Counter(s for t in tools if t.name_is_string and (s := _style(t.name)) is not None)
    if len(styles) > 1:
        summary = ", ".join(f"{style} ×{count}" for style, count in styles.most_common())
        yield RULE.finding(None, f"tool names mix naming styles ({summary})", evidence=summary)


def _prefix_findings(tools: list[ToolView]) -> Iterator[Finding]:
    named = [t for t in tools if t.name_is_string and len(t.tokens) > 1]
    if len(tools) < MIN_TOOLS_FOR_PREFIX or len(named) < MIN_TOOLS_FOR_PREFIX:
        return
    firsts = Counter(t.tokens[0] for t in named if t.tokens[0] not in ALL_GROUPED_VERBS)
    prefix, count = firsts.most_common(1)[0] if firsts else ("", 0)
    if count >= PREFIX_SHARE * len(tools) and count < len(tools):
        for tool in tools:
            if tool.name_is_string and (not tool.tokens or tool.tokens[0] != prefix):
                yield RULE.finding(tool.name, f"name lacks the service prefix `{prefix}` that {count} of "
                                   f"{len(tools)} tools use", evidence=tool.name)
    elif count < PREFIX_SHARE * len(tools):
        yield RULE.finding(None, "tools share no service prefix; names may clash with other servers' tools",
                           severity="info", fix="Prefix every tool name with the service name (github_create_issue).")


def check(ctx: LintContext) -> Iterator[Finding]:
    yield from _spec_findings(ctx.tools)
    yield from _generic_findings(ctx.tools)
    yield from _style_findings(ctx.tools)
    yield from _prefix_findings(ctx.tools)
