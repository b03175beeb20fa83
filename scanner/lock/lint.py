"""The static rules on what changed since the lock: a new or changed tool, new instructions or prompts get their own
findings (hidden instructions above all), shown beside the diff. Only the text that moved is linted, and only the
findings the locked text did not already have are kept."""

from __future__ import annotations

from scanner.lock.diff import first_by_name
from scanner.lock.model import LockFile
from scanner.report.model import Finding
from scanner.rules.static.changed import server_text_findings, tool_findings


def changed_text_findings(old: LockFile, new: LockFile) -> list[Finding]:
    """Findings on every tool of `new` whose definition the lock does not pin (duplicates included), compared with
    the locked tool of that name; then on the instructions and prompts when they changed."""
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
    old_prompts = {e.fingerprint for e in old.prompts}
    instructions_moved = new.server.instructions_known and (not old.server.instructions_known
                                                             or old.server.instructions != new.server.instructions)
    prompts_moved = any(e.fingerprint not in old_prompts for e in new.prompts)
    if not instructions_moved and not prompts_moved:
        return []
    before = old.server.instructions if old.server.instructions_known else None
    return server_text_findings(before, new.server.instructions if instructions_moved else before,
                                [e.definition for e in old.prompts], [e.definition for e in new.prompts])
