"""The static findings a changed definition brings: rules S1-S14 on the new text, minus what the old text already had.

Used where a definition is compared with an earlier one (`lock --check`, a tool re-listed mid-scan), so poisoned
text that arrives after the first look (a rug pull) gets its own findings, not only a diff. Each tool is judged on
its own: rules that compare tools with each other (overlap, duplicate names, a shared prefix, "no tool on this
server has annotations") need the whole list, which `check` and `scan` lint, and are left out here.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from scanner.report.model import Finding
from scanner.rules.static.engine import run_rules



def _key(finding: Finding) -> tuple[str, str | None, str, str | None]:
    return finding.rule_id, finding.tool, finding.message, finding.evidence


def _new(before: Iterable[Finding], after: Iterable[Finding]) -> list[Finding]:
    had = {_key(f) for f in before}
    return [f for f in after if _key(f) not in had]


def _one_tool(definition: Any) -> list[Finding]:
    """The rules on a list of this one tool: the pairwise ones find nothing; list-level findings (no tool field,
    e.g. S6's total size or S13's "no tool on this server has annotations") would speak for the whole server."""
    return [f for f in run_rules([definition]) if f.tool is not None]


def tool_findings(before: Any | None, after: Any) -> list[Finding]:
    """The findings of a tool's new definition that its old one (None: the tool is new) did not have."""
    return _new(_one_tool(before) if before is not None else [], _one_tool(after))


def server_text_findings(instructions_before: str | None, instructions_after: str | None,
                         prompts_before: list[Any] | None = None, prompts_after: list[Any] | None = None,
                         resources_before: tuple[list[Any], list[Any]] = ([], []),
                         resources_after: tuple[list[Any], list[Any]] = ([], [])) -> list[Finding]:
    """The findings of the server's new instructions, prompts, resources and resource templates (each a pair:
    resources, templates) that the old ones did not have."""
    had = instructions_before or prompts_before or any(resources_before)
    before = run_rules([], prompts_before, instructions_before, resources=resources_before[0],
                       resource_templates=resources_before[1]) if had else []
    return _new(before, run_rules([], prompts_after, instructions_after, resources=resources_after[0],
                                  resource_templates=resources_after[1]))
