"""What can change between a lock and a later run, and how much each change matters."""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, ConfigDict

from scanner.report.severity import Severity, meets_fail_on
from scanner.report.severity import counts as severity_counts

ChangeKind = Literal[
    "tool_added",
    "tool_removed",
    "duplicate_tool",
    "description_changed",
    "title_changed",
    "schema_text_changed",
    "schema_widened",
    "schema_changed",
    "output_schema_changed",
    "annotations_changed",
    "meta_changed",
    "definition_changed",
    "instructions_changed",
    "instructions_unchecked",
    "server_changed",
    "provenance_changed",
    "provenance_unchecked",
]

# The usual severity of each kind, as strong as mcp-linter's lock: anything that changes or adds text the model reads,
# widens what a tool accepts, or adds a tool is an error, so refreshing a lock over it needs `--accept`. A few kinds
# are raised or lowered per change (annotations that claim more safety are errors, more declared risk a warning;
# instructions that were cleared are a warning; a lost signature is an error); those decisions live next to the
# check that makes them.
DEFAULT_SEVERITY: dict[str, Severity] = {
    "tool_added": "error",
    "tool_removed": "info",
    "duplicate_tool": "error",
    "description_changed": "error",
    "title_changed": "error",
    "schema_text_changed": "error",
    "schema_widened": "error",
    "schema_changed": "info",
    "output_schema_changed": "warning",
    "annotations_changed": "warning",
    "meta_changed": "info",
    "definition_changed": "info",
    "instructions_changed": "error",
    "instructions_unchecked": "warning",
    "server_changed": "warning",
    "provenance_changed": "error",
    "provenance_unchecked": "info",
}


class Change(BaseModel):
    model_config = ConfigDict(extra="forbid")

    kind: ChangeKind
    severity: Severity
    tool: str | None = None
    message: str
    old: str | None = None
    new: str | None = None


def change(kind: ChangeKind, message: str, *, tool: str | None = None, severity: Severity | None = None,
           old: str | None = None, new: str | None = None) -> Change:
    return Change(kind=kind, severity=severity or DEFAULT_SEVERITY[kind], tool=tool, message=message, old=old, new=new)


def at_or_above(changes: list[Change], level: str) -> list[Change]:
    """The changes that meet a --fail-on level (`never` meets none)."""
    return [c for c in changes if meets_fail_on(c.severity, level)]


def counts(changes: list[Change]) -> dict[str, int]:
    return severity_counts(c.severity for c in changes)
