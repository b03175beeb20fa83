"""diff(old, new): every change between a lock and a later run, most severe first."""

from __future__ import annotations

from scanner.lock.changes import Change, change
from scanner.lock.model import LockedTool, LockFile
from scanner.lock.provenance_diff import provenance_changes
from scanner.lock.server_diff import duplicate_changes, entry_changes, instructions_changes, server_changes
from scanner.lock.text import quoted, stored
from scanner.lock.tool_diff import tool_changes
from scanner.report.severity import most_severe_first


def diff(old: LockFile, new: LockFile) -> list[Change]:
    changes = [
        *duplicate_changes(new, old),
        *tool_set_changes(old, new),
        *instructions_changes(old.server, new.server),
        *server_changes(old.server, new.server),
        *entry_changes("prompt", old.prompts, new.prompts),
        *entry_changes("resource", old.resources, new.resources),
        *entry_changes("resource template", old.resource_templates, new.resource_templates),
        *provenance_changes(old, new),
    ]
    return sorted(changes, key=lambda c: most_severe_first(c.severity))


def first_by_name(tools: list[LockedTool]) -> dict[str, LockedTool]:
    """Each name's first tool: the one a lock compares when a server lists a name twice."""
    first: dict[str, LockedTool] = {}
    for tool in tools:
        first.setdefault(tool.name, tool)
    return first


def tool_set_changes(old: LockFile, new: LockFile) -> list[Change]:
    before, after = first_by_name(old.tools), first_by_name(new.tools)
    added = sorted(set(after) - set(before))
    removed = sorted(set(before) - set(after))
    out = [_added(after[name], removed) for name in added]
    out += [_removed(before[name], added) for name in removed]
    for name in sorted(set(before) & set(after)):
        out += _same_name_changes(name, before[name], old.tools, new.tools)
    return out


def _same_name_changes(name: str, locked: LockedTool, old: list[LockedTool], new: list[LockedTool]) -> list[Change]:
    """A name both sides list: the first tool under it the lock does not pin is compared with the locked one (the
    lock holds twins sorted by fingerprint, so comparing first with first would read an accepted twin as changed);
    a pinned twin that is no longer listed is a removal."""
    pinned = [t.fingerprint for t in old if t.name == name]
    listed = {t.fingerprint for t in new if t.name == name}
    fresh = next((t for t in new if t.name == name and t.fingerprint not in pinned), None)
    out = tool_changes(name, locked.definition, fresh.definition) if fresh is not None else []
    gone = [p for p in pinned if p not in listed]
    if gone and len(pinned) > 1:
        out.append(change("tool_removed", f"{len(gone)} of the {len(pinned)} tools the lock pins under "
                          f"{quoted(name)} no longer listed", tool=name))
    return out


def _added(tool: LockedTool, removed: list[str]) -> Change:
    description = tool.definition.get("description")
    message = f"tool {quoted(tool.name)} added; its description reads {quoted(description)}"
    if removed:
        message += f" (removed in the same run: {', '.join(quoted(n) for n in removed)}; a rename shows as both)"
    return change("tool_added", message, tool=tool.name, new=stored(description))


def _removed(tool: LockedTool, added: list[str]) -> Change:
    message = f"tool {quoted(tool.name)} removed"
    if added:
        message += f" (added in the same run: {', '.join(quoted(n) for n in added)})"
    return change("tool_removed", message, tool=tool.name, old=stored(tool.definition.get("description")))
