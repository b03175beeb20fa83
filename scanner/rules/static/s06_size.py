"""S6 definitions-too-large: estimated tokens of all definitions and bytes of tools/list."""

from __future__ import annotations

from collections.abc import Iterator

from scanner.report.model import Finding
from scanner.rules.registry import rule
from scanner.rules.static.context import LintContext
from scanner.report.score import TOKENS_ERROR, TOKENS_WARNING

RULE = rule("S6")


BYTES_WARNING = 256 * 1024
BYTES_ERROR = 1024 * 1024


def check(ctx: LintContext) -> Iterator[Finding]:
    tokens = ctx.total_tokens
    if tokens > TOKENS_ERROR:
        yield RULE.finding(None, f"all tool definitions take ~{tokens:,} tokens (estimate; over {TOKENS_ERROR:,})",
                           severity="error", evidence=f"{len(ctx.tools)} tools")
    elif tokens > TOKENS_WARNING:
        yield RULE.finding(None, f"all tool definitions take ~{tokens:,} tokens (estimate; over {TOKENS_WARNING:,})",
                           evidence=f"{len(ctx.tools)} tools")
    size = ctx.payload_bytes
    if size > BYTES_ERROR:
        yield RULE.finding(None, f"tools/list is {size:,} bytes (over 1 MiB)", severity="error")
    elif size > BYTES_WARNING:
        yield RULE.finding(None, f"tools/list is {size:,} bytes (over 256 KiB)")
