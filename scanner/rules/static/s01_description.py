"""S1 tool-description-quality: missing, short or vague tool descriptions."""

from __future__ import annotations

import re
from collections.abc import Iterator

from scanner.report.model import Finding
from scanner.rules.registry import rule
from scanner.rules.static.context import LintContext
from scanner.rules.static.text import words

RULE = rule("S1")


MIN_WORDS = 15
VAGUE_WORDS = frozenset({"stuff", "things", "thing", "helper", "misc", "various", "general", "etc", "whatever"})
VAGUE_PHRASES = re.compile(r"\b(helps? (you )?with (stuff|things|various)|does (stuff|things)|various (things|stuff)"
                           r"|general[- ]purpose (helper|tool|utility))\b", re.IGNORECASE)


def check(ctx: LintContext) -> Iterator[Finding]:
    for tool in ctx.tools:
        if not tool.has_description:
            yield RULE.finding(tool.name, "tool has no description", severity="error")
            continue
        count = len(words(tool.description))
        lowered = {w.lower() for w in words(tool.description)}
        if (count <= 3 and lowered & VAGUE_WORDS) or VAGUE_PHRASES.search(tool.description):
            yield RULE.finding(tool.name, "tool description is vague", evidence=tool.description[:200])
        elif count < MIN_WORDS:
            yield RULE.finding(tool.name, f"tool description has {count} words (under {MIN_WORDS})",
                               evidence=tool.description[:200])
