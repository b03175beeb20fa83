"""S12 unscoped-destructive-tool: file write/delete tools that name no scope, or boast unlimited reach."""

from __future__ import annotations

import re
from collections.abc import Iterator

from scanner.report.model import Finding
from scanner.rules.registry import rule
from scanner.rules.static.context import LintContext
from scanner.rules.static.s11_capability import capabilities

RULE = rule("S12")

SCOPE = re.compile(
    r"\b(workspace|allowed (directories|dirs|paths|folders|roots)|sandbox(ed)?|within|inside|project|repository"

    r"|repo|working directory|current directory|restricted|limited to|scoped|configured (directories|paths|root)"
    r"|permitted|roots?)\b", re.IGNORECASE)
BOAST = re.compile(
    r"\b(delete|deletes|remove|removes|wipe|wipes|overwrite|overwrites|modify|modifies|write|writes|erase|erases"
    r"|destroy|destroys)\b[^.\n]{0,30}\b(any|all|every|arbitrary)\b[^.\n]{0,20}"
    r"\b(files?|director(y|ies)|folders?|paths?|data)\b[^.\n]{0,30}\b(on|in|across|of|anywhere)\b[^.\n]{0,12}"
    r"\b(host|system|machine|computer|disk|filesystem|file system)\b"
    r"|\b(full|unrestricted|complete|root|unlimited)\b (read[/ -]write )?(access|control|permissions?)\b[^.\n]{0,20}"
    r"\b(host|system|machine|computer|filesystem|file system|disk)\b", re.IGNORECASE)


BOAST_CUES = ("host", "system", "machine", "computer", "disk")


def _boast(description: str) -> re.Match[str] | None:
    lowered = description.lower()
    return BOAST.search(description) if any(cue in lowered for cue in BOAST_CUES) else None


def check(ctx: LintContext) -> Iterator[Finding]:
    for tool in ctx.tools:
        boast = _boast(tool.description)
        if boast:
            yield RULE.finding(tool.name, "description boasts broad destructive power", severity="error",
                               evidence=boast.group(0)[:200])
            continue
        kinds = capabilities(tool).keys() & {"fs-write", "fs-delete"}
        if kinds and not SCOPE.search(tool.description):
            yield RULE.finding(tool.name, f"{'/'.join(sorted(kinds))} tool does not say where it may act",
                               evidence=tool.description[:200] or "(no description)")
