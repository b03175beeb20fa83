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
    old_named, new_named = _by_name(old.tools), _by_name(new.tools)  # each name's tools, found once (not per name)
    for name in sorted(set(before) & set(after)):
        out += _same_name_changes(name, before[name], old_named[name], new_named[name])
    return out


def _by_name(tools: list[LockedTool]) -> dict[str, list[LockedTool]]:
    named: dict[str, list[LockedTool]] = {}
    for tool in tools:
        named.setdefault(tool.name, []).append(tool)
    return named


def _same_name_changes(name: str, locked: LockedTool, old: list[LockedTool], new: list[LockedTool]) -> list[Change]:
    """A name both sides list (`old`, `new`: the tools under it): the first tool the lock does not pin is compared
    with the locked one (the lock holds twins sorted by fingerprint, so comparing first with first would read an
    accepted twin as changed); a pinned twin that is no longer listed is a removal."""
    pinned = [t.fingerprint for t in old]
    listed = {t.fingerprint for t in new}
    fresh = next((t for t in new if t.fingerprint not in pinned), None)
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
        message += f" (removed in the same run: {_some(removed)}; a rename shows as both)"
    return change("tool_added", message, tool=tool.name, new=stored(description))


def _removed(tool: LockedTool, added: list[str]) -> Change:
    message = f"tool {quoted(tool.name)} removed"
    if added:
        message += f" (added in the same run: {_some(added)})"
    return change("tool_removed", message, tool=tool.name, old=stored(tool.definition.get("description")))


NAMES_SHOWN = 5  # each added/removed tool's message names the other side's: all of them made every message O(n)


def _some(names: list[str]) -> str:
    """The first NAMES_SHOWN names, quoted, and how many more (3,000 renamed tools wrote a 366 MB --json)."""
    shown = ", ".join(quoted(n) for n in names[:NAMES_SHOWN])
    return shown + (f" and {len(names) - NAMES_SHOWN} more" if len(names) > NAMES_SHOWN else "")
