"""The static rules on what changed since the lock: a new or changed tool, new instructions or prompts get their own
findings (hidden instructions above all), shown beside the diff. Only the text that moved is linted, and only the
findings the locked text did not already have are kept."""

from __future__ import annotations

from typing import Any

from scanner.lock.diff import first_by_name
from scanner.lock.model import LockedEntry, LockFile
from scanner.report.model import Finding
from scanner.rules.static.changed import server_text_findings, tool_findings


def changed_text_findings(old: LockFile, new: LockFile) -> list[Finding]:
    """Findings on every tool of `new` whose definition the lock does not pin (duplicates included), compared with
    the locked tool of that name; then on the instructions, prompts, resources and resource templates when they changed."""
    locked = first_by_name(old.tools)
    pinned = {(t.name, t.fingerprint) for t in old.tools}
    findings: list[Finding] = []
    for tool in new.tools:
        if (tool.name, tool.fingerprint) in pinned:
            continue
        before = locked.get(tool.name)
        findings += tool_findings(before.definition if before is not None else None, tool.definition)
    return findings + _server_findings(old, new)


def _server_findings(old: LockFile, new: LockFile) -> list[Finding]:
    instructions_moved = new.server.instructions_known and (not old.server.instructions_known
                                                             or old.server.instructions != new.server.instructions)
    if not instructions_moved and not any(_moved(before, after) for before, after in _entry_lists(old, new)):
        return []
    before = old.server.instructions if old.server.instructions_known else None
    return server_text_findings(before, new.server.instructions if instructions_moved else before,
                                _definitions(old.prompts), _definitions(new.prompts),
                                (_definitions(old.resources), _definitions(old.resource_templates)),
                                (_definitions(new.resources), _definitions(new.resource_templates)))


def _entry_lists(old: LockFile, new: LockFile) -> list[tuple[list[LockedEntry], list[LockedEntry]]]:
    return [(old.prompts, new.prompts), (old.resources, new.resources),
            (old.resource_templates, new.resource_templates)]


def _moved(before: list[LockedEntry], after: list[LockedEntry]) -> bool:
    """An entry the lock does not pin (new, or changed)."""
    pinned = {e.fingerprint for e in before}
    return any(e.fingerprint not in pinned for e in after)


def _definitions(entries: list[LockedEntry]) -> list[dict[str, Any]]:
    return [e.definition for e in entries]
