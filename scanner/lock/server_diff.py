"""Changes at server level: instructions, server identity and capabilities, prompts and resources."""

from __future__ import annotations

from typing import Any

from scanner.lock.annotations import js_truthy
from scanner.lock.canonical import same_json
from scanner.lock.changes import Change, change
from scanner.lock.model import LockedEntry, LockedServer, LockFile
from scanner.lock.text import quoted, stored
from scanner.report.model import Severity

_FIELD_SEVERITY: tuple[tuple[str, Severity], ...] = (("name", "warning"), ("version", "info"),
                                                     ("protocol_version", "info"))


def instructions_changes(old: LockedServer, new: LockedServer) -> list[Change]:
    if old.instructions_known and new.instructions_known:
        if old.instructions == new.instructions or _blank(old.instructions) and _blank(new.instructions):
            return []  # absent, "" and whitespace all say nothing: none before, none now
        if _blank(new.instructions):  # cleared: nothing new reaches the model
            return [change("instructions_changed", "the server's instructions were removed", severity="warning",
                           old=stored(old.instructions), new=stored(new.instructions))]
        return [change("instructions_changed", f"the server's instructions changed; they now read "
                       f"{quoted(new.instructions)}", old=stored(old.instructions), new=stored(new.instructions))]
    if old.instructions_known:
        return [change("instructions_unchecked", "the lock records the server's instructions but the input does "
                       "not carry them (a bare tools/list), so they were not compared; give an input with "
                       "\"instructions\" or a saved report", old=stored(old.instructions))]
    if new.instructions_known:
        return [change("instructions_unchecked", "the lock does not record the server's instructions, so they "
                       "were not compared; refresh the lock to pin them", severity="info",
                       new=stored(new.instructions))]
    return []  # neither side has them: nothing changed (not_compared says so)


def _blank(instructions: str | None) -> bool:
    return not (instructions or "").strip()


def not_compared(old: LockFile, new: LockFile) -> list[str]:
    """What neither the lock nor the input carries, so it could not be compared (said beside "no changes")."""
    return [] if old.server.instructions_known or new.server.instructions_known else ["the server's instructions"]


def server_changes(old: LockedServer, new: LockedServer) -> list[Change]:
    out: list[Change] = []
    for field, severity in _FIELD_SEVERITY:
        before, after = getattr(old, field), getattr(new, field)
        if before == after:
            continue
        if after is None:
            out.append(change("server_changed", f"server {field} is not in the input, so it was not compared "
                              f"(the lock has {quoted(before)})", severity="info"))
        else:
            out.append(change("server_changed", f"server {field} changed: {quoted(before)} -> {quoted(after)}",
                              severity=severity, old=stored(before), new=stored(after)))
    out += _capability_changes(old, new)
    return out


def _capability_changes(old: LockedServer, new: LockedServer) -> list[Change]:
    if same_json(old.capabilities, new.capabilities):
        return []
    added = gained_capabilities(old.capabilities, new.capabilities)
    detail = f"capabilities changed: {quoted(old.capabilities)} -> {quoted(new.capabilities)}"
    shown = ", ".join(quoted(a) for a in added[:NAMES_SHOWN]) + (" ..." if len(added) > NAMES_SHOWN else "")
    return [change("server_changed", (f"new capabilities {shown}; " if added else "") + detail,
                   severity="warning" if added else "info")]


NAMES_SHOWN = 5


def gained_capabilities(old: dict[str, Any], new: dict[str, Any]) -> list[str]:
    """The capabilities `new` declares that `old` did not, at any depth, as dotted paths: a key that was not there,
    with a value that is not false/null/0/"" (`sampling: {}`, `tools.listChanged: true`), or a flag that turned on
    (`tools.listChanged` false -> true: the server may now change its tools mid-session, after the listing a check
    compares). Iterative: the value is served."""
    gained: list[str] = []
    stack: list[tuple[Any, Any, str]] = [(old, new, "")]
    while stack:
        before, after, path = stack.pop()
        if isinstance(after, dict):
            for key, value in after.items():
                where = f"{path}.{key}" if path else key
                if not isinstance(before, dict) or key not in before:
                    if js_truthy(value):  # `listChanged: false` added declares nothing
                        gained.append(where)
                else:
                    stack.append((before[key], value, where))
        elif js_truthy(after) and not js_truthy(before):
            gained.append(path)
    return sorted(gained)


def entry_changes(what: str, old: list[LockedEntry], new: list[LockedEntry]) -> list[Change]:
    """Prompts, resources and resource templates: added or changed is a warning (their text reaches the model)."""
    before = {e.key: e for e in reversed(old)}
    after = {e.key: e for e in reversed(new)}
    out: list[Change] = []
    for key in sorted(set(after) - set(before)):
        description = after[key].definition.get("description")
        out.append(change("server_changed", f"{what} {quoted(key)} added; its description reads "
                          f"{quoted(description)}", new=stored(after[key].definition)))
    for key in sorted(set(before) - set(after)):
        out.append(change("server_changed", f"{what} {quoted(key)} removed", severity="info",
                          old=stored(before[key].definition)))
    for key in sorted(set(before) & set(after)):
        if before[key].fingerprint != after[key].fingerprint:
            fields = _moved_fields(before[key], after[key])
            out.append(change("server_changed", f"{what} {quoted(key)} changed ({fields})",
                              old=stored(before[key].definition), new=stored(after[key].definition)))
        else:
            out += _twin_changes(what, key, old, new)
    return out


def _twin_changes(what: str, key: str, old: list[LockedEntry], new: list[LockedEntry]) -> list[Change]:
    """Entries listed under a key the lock pins once more than before: the lock keeps them sorted by fingerprint, so
    the one compared by key may be the pinned one while a twin beside it brings new text a client may read."""
    pinned = {e.fingerprint for e in old if e.key == key}
    twins = [e for e in new if e.key == key and e.fingerprint not in pinned]
    return [change("server_changed", f"{what} {quoted(key)} is listed again with another definition; its "
                   f"description reads {quoted(twin.definition.get('description'))}", new=stored(twin.definition))
            for twin in twins]


def _moved_fields(old: LockedEntry, new: LockedEntry) -> str:
    keys = set(old.definition) | set(new.definition)
    moved = sorted(k for k in keys if not same_json(old.definition.get(k), new.definition.get(k))
                   or (k in old.definition) != (k in new.definition))
    return ", ".join(moved) if moved else "definition"


def duplicate_changes(new: LockFile, pinned: LockFile | None = None) -> list[Change]:
    """Names that several tools of `new` share, unless the lock pinned exactly those tools (accepted before)."""
    twins, locked = _by_name(new), _by_name(pinned) if pinned is not None else {}
    return [change("duplicate_tool", f"{len(prints)} tools share the name {quoted(name)}: a client may call any of "
                   "them; the first the lock does not pin is compared", tool=name)
            for name, prints in sorted(twins.items()) if len(prints) > 1 and locked.get(name) != prints]


def _by_name(lock: LockFile) -> dict[str, list[str]]:
    """Each tool name's fingerprints, in the lock's (sorted) order."""
    found: dict[str, list[str]] = {}
    for tool in lock.tools:
        found.setdefault(tool.name, []).append(tool.fingerprint)
    return {name: sorted(prints) for name, prints in found.items()}
