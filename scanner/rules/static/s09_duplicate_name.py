"""S9 duplicate-tool-name: the same tool name listed more than once."""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterator

from scanner.report.model import Finding
from scanner.rules.registry import rule
from scanner.rules.static.context import LintContext

RULE = rule("S9")


def check(ctx: LintContext) -> Iterator[Finding]:
    counts = Counter(t.name for t in ctx.tools if t.name_is_string)
    for name, count in counts.items():
        if count > 1:
            yield RULE.finding(name, f"tool name is listed {count} times", evidence=name)
