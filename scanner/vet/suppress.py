"""Inline suppression directives, in any comment style (`//`, `#`, `/* */`): `mcp-vet-disable-line [IDS]`,
`mcp-vet-disable-next-line [IDS]` and `mcp-vet-disable-file [IDS]`, and the same with the `mcp-sandbox-` prefix
(`mcp-sandbox-disable-line`). No ids means every rule. Only ids `vet` knows count: an unknown word after the directive
never widens it to "all". Every finding a directive silences is counted and reported by the engine."""

from __future__ import annotations

import re
from collections.abc import Collection
from dataclasses import dataclass, field

DIRECTIVE = re.compile(r"(mcp-vet|mcp-sandbox)-disable-(file|next-line|line)\b([^\r\n]*)")
ID_WORD = re.compile(r"[A-Z][A-Z0-9_]+")
ALL = frozenset({"*"})


@dataclass
class Suppressions:
    """Which rule ids are silenced where: for the whole file, and by line (ALL = every rule)."""

    file_ids: frozenset[str] = frozenset()
    by_line: dict[int, frozenset[str]] = field(default_factory=dict)
    directive_at: dict[int, str] = field(default_factory=dict)

    def silences(self, line: int, rule_id: str) -> str | None:
        """The directive that silences `rule_id` on `line`, or None."""
        if self.file_ids and ("*" in self.file_ids or rule_id in self.file_ids):
            return "disable-file"
        ids = self.by_line.get(line)
        if ids is not None and ("*" in ids or rule_id in ids):
            return self.directive_at[line]
        return None


def _ids(trailing: str, known: Collection[str]) -> frozenset[str]:
    found = frozenset(word for word in ID_WORD.findall(trailing.upper()) if word in known)
    return found or ALL


def _merge(old: frozenset[str] | None, new: frozenset[str]) -> frozenset[str]:
    if old is None:
        return new
    return ALL if ALL in (old, new) else old | new


def parse_suppressions(lines: tuple[str, ...] | list[str], known: Collection[str]) -> Suppressions:
    """The directives of one file. The text is matched on every line, so a directive works in any comment syntax."""
    result = Suppressions()
    for index, line in enumerate(lines):
        if "-disable-" not in line:
            continue
        for match in DIRECTIVE.finditer(line):
            kind, ids = match.group(2), _ids(match.group(3), known)
            if kind == "file":
                result.file_ids = _merge(result.file_ids or None, ids)
                continue
            target = index + 1 if kind == "line" else index + 2
            result.by_line[target] = _merge(result.by_line.get(target), ids)
            result.directive_at[target] = f"disable-{kind}"
    return result
