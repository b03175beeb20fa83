"""Run every enabled rule over a normalised context and apply the config's ignores."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from typing import Any

from scanner.config import Config
from scanner.report.model import Finding
from scanner.rules.static import (s01_description, s02_vague_parameter, s03_parameter_schema, s04_overlap, s05_naming, s06_size, s07_unbounded_list, s08_hidden_text, s09_duplicate_name, s10_loose_schema, s11_capability, s12_scope, s13_annotations, s14_prompts)
from scanner.rules.static.context import LintContext, build_context

Check = Callable[[LintContext], Iterator[Finding]]

CHECKS: dict[str, Check] = {
    "S1": s01_description.check,
    "S2": s02_vague_parameter.check,
    "S3": s03_parameter_schema.check,
    "S4": s04_overlap.check,
    "S5": s05_naming.check,
    "S6": s06_size.check,
    "S7": s07_unbounded_list.check,
    "S8": s08_hidden_text.check,
    "S9": s09_duplicate_name.check,
    "S10": s10_loose_schema.check,
    "S11": s11_capability.check,
    "S12": s12_scope.check,
    "S13": s13_annotations.check,
    "S14": s14_prompts.check,
}
SEVERITY_ORDER = {"error": 0, "warning": 1, "info": 2}


def run_context(ctx: LintContext, config: Config | None = None) -> list[Finding]:
    """All findings of the enabled rules, minus ignored rule:tool pairs, in a stable order."""
    config = config or Config()
    findings: list[Finding] = []
    for rule_id, check in CHECKS.items():
        if rule_id in config.disabled:
            continue
        findings.extend(f for f in check(ctx) if not config.ignores(f.rule_id, f.tool))
    return findings


def run_rules(
    tools: list[Any],
    prompts: list[Any] | None = None,
    instructions: str | None = None,
    server_info: dict[str, Any] | None = None,
    config: Config | None = None,
    payload_bytes: int | None = None,
) -> list[Finding]:
    """Lint a tools/list result (plus prompts, instructions, serverInfo) with the static rules S1-S14."""
    ctx = build_context(tools, prompts, instructions, server_info, payload_bytes)
    return run_context(ctx, config)
