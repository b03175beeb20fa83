"""Run every static rule over a normalised context. A config's `disable`/`ignore` is applied to the report
(scanner.config.Config.apply_to), never here: suppressed findings stay in the report, marked."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from types import ModuleType
from typing import Any

from scanner.report.model import Finding
from scanner.rules.static import (s01_description, s02_vague_parameter, s03_parameter_schema, s04_overlap, s05_naming,
                                  s06_size, s07_unbounded_list, s08_hidden_text, s09_duplicate_name, s10_loose_schema,
                                  s11_capability, s12_scope, s13_annotations, s14_prompts)
from scanner.rules.static.context import LintContext, build_context

Check = Callable[[LintContext], Iterator[Finding]]

# Each module is one static rule: its RULE (from the registry) and its `check`, listed here once.
MODULES: tuple[ModuleType, ...] = (
    s01_description, s02_vague_parameter, s03_parameter_schema, s04_overlap, s05_naming, s06_size, s07_unbounded_list,
    s08_hidden_text, s09_duplicate_name, s10_loose_schema, s11_capability, s12_scope, s13_annotations, s14_prompts,
)
CHECKS: dict[str, Check] = {module.RULE.id: module.check for module in MODULES}


def run_context(ctx: LintContext) -> list[Finding]:
    """All findings of every static rule, in a stable order."""
    return [finding for check in CHECKS.values() for finding in check(ctx)]


def run_rules(tools: list[Any], prompts: list[Any] | None = None, instructions: str | None = None,
              server_info: dict[str, Any] | None = None, payload_bytes: int | None = None,
              resources: list[Any] | None = None, resource_templates: list[Any] | None = None) -> list[Finding]:
    """Lint a tools/list result (plus prompts, instructions, serverInfo, resources) with the static rules S1-S14."""
    return run_context(build_context(tools, prompts, instructions, server_info, payload_bytes, resources,
                                     resource_templates))
