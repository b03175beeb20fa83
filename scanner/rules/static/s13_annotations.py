"""S13 annotations: missing hints, and hints that contradict what the tool says it does."""

from __future__ import annotations

import re
from collections.abc import Iterator

from scanner.report.model import Finding
from scanner.rules.registry import rule
from scanner.rules.static.context import LintContext, ToolView
from scanner.rules.static.s11_capability import capabilities
from scanner.vocabulary import MUTATING_GROUPS

RULE = rule("S13")


MUTATING_OPENING = re.compile(r"^\s*(deletes?|removes?|overwrites?|writes?|erases?|destroys?|drops?|executes?"
                              r"|modif(y|ies)|updates?|creates?)\b", re.IGNORECASE)


def _contradictions(tool: ToolView) -> Iterator[Finding]:
    annotations = tool.annotations or {}
    read_only = annotations.get("readOnlyHint") is True
    mutating = tool.verb in MUTATING_GROUPS or bool(MUTATING_OPENING.search(tool.description)) or bool(
        capabilities(tool).keys() & {"exec", "fs-write", "fs-delete", "download-exec"})
    if read_only and mutating:
        yield RULE.finding(tool.name, "marked readOnlyHint but its name or description says it changes things",
                           severity="error", category="security",
                           evidence=f"readOnlyHint: true; {tool.description[:120] or tool.name}")
    elif read_only and annotations.get("destructiveHint") is True:
        yield RULE.finding(tool.name, "readOnlyHint and destructiveHint are both true", evidence=str(annotations)[:200])
    elif tool.verb == "delete" and annotations.get("destructiveHint") is False:
        yield RULE.finding(tool.name, "delete tool is marked destructiveHint: false", category="security",
                           evidence="destructiveHint: false")


def check(ctx: LintContext) -> Iterator[Finding]:
    if ctx.tools and not any(t.annotations for t in ctx.tools):
        yield RULE.finding(None, "no tool on this server has annotations (readOnlyHint, destructiveHint ...)")
        return
    for tool in ctx.tools:
        annotations = tool.annotations or {}
        if "readOnlyHint" not in annotations and "destructiveHint" not in annotations:
            yield RULE.finding(tool.name, "tool has no readOnlyHint or destructiveHint annotation", severity="info")
        yield from _contradictions(tool)
