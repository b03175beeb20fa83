"""S2 vague-parameter-name: parameters called `id`, `data`, `q` ... with no description."""

from __future__ import annotations

from collections.abc import Iterator

from scanner.report.model import Finding
from scanner.rules.registry import rule
from scanner.rules.static.context import LintContext

RULE = rule("S2")

VAGUE_NAMES = frozenset({
    "id", "user", "data", "q", "x", "y", "n", "s", "t", "p", "v", "val", "value", "obj", "object", "item", "input",
    "arg", "args", "param", "params", "key", "info", "thing", "str", "string", "num", "payload", "stuff", "misc",
    "temp", "tmp", "foo", "bar",
})


def check(ctx: LintContext) -> Iterator[Finding]:
    for tool in ctx.tools:
        for param in tool.params:
            if param.name.lower() in VAGUE_NAMES and not param.description:
                yield RULE.finding(tool.name, f"parameter `{param.name}` has a vague name and no description",
                                   evidence=param.name)
