"""The changes between two definitions of the same tool, one change kind per thing that moved."""

from __future__ import annotations

from typing import Any, Callable

from scanner.lock.annotations import TITLE_KEY, as_annotations, compare_annotations
from scanner.lock.canonical import same_json
from scanner.lock.changes import Change, change
from scanner.report.severity import worst
from scanner.lock.schema_diff import SchemaDelta, compare_schemas, display_path
from scanner.lock.text import quoted, stored

KNOWN_FIELDS = frozenset({"name", "title", "description", "inputSchema", "outputSchema", "annotations", "_meta"})


def tool_changes(name: str, old: dict[str, Any], new: dict[str, Any]) -> list[Change]:
    """Every change between two definitions of one tool; a fingerprint difference is never left unexplained."""
    out: list[Change] = []
    for check in _CHECKS:
        out += check(name, old, new)
    if not out and not same_json(old, new):
        out.append(change("definition_changed", "the definition changed (fingerprint differs)", tool=name))
    return out


def _name(name: str, old: dict[str, Any], new: dict[str, Any]) -> list[Change]:
    """Tools are matched by key, and a name that is not a string is keyed by its JSON (`1` -> `{"name":1}`): a tool
    now served under that text as its name is one a client can call where the locked one could not be."""
    before, after = old.get("name"), new.get("name")
    if same_json(before, after):
        return []
    return [change("tool_added", f"the name changed from {quoted(before)} to {quoted(after)} under the same key: a "
                   "tool a client could not call before (a name that is not a string) is now listed", tool=name)]


def _description(name: str, old: dict[str, Any], new: dict[str, Any]) -> list[Change]:
    before, after = old.get("description"), new.get("description")
    if same_json(before, after):
        return []
    return [change("description_changed", f"description changed; it now reads {quoted(after)}", tool=name,
                   old=stored(before), new=stored(after))]


def _titles(name: str, old: dict[str, Any], new: dict[str, Any]) -> list[Change]:
    out = []
    pairs = (("title", old.get("title"), new.get("title")),
             ("annotations.title", as_annotations(old.get("annotations")).get(TITLE_KEY),
              as_annotations(new.get("annotations")).get(TITLE_KEY)))
    for where, before, after in pairs:
        if not same_json(before, after):
            out.append(change("title_changed", f"{where} changed: {quoted(before)} -> {quoted(after)}", tool=name,
                              old=stored(before), new=stored(after)))
    return out


def _input_schema(name: str, old: dict[str, Any], new: dict[str, Any]) -> list[Change]:
    deltas = compare_schemas(old.get("inputSchema"), new.get("inputSchema"))
    out = [change("schema_text_changed", f"input schema text changed at {display_path(d.path)}: now {quoted(d.new)}",
                  tool=name, old=d.old, new=d.new) for d in deltas if d.effect == "text"]
    widened = [d for d in deltas if d.effect == "widened"]
    changed = [d for d in deltas if d.effect == "changed"]
    if widened:
        out.append(change("schema_widened", "input schema widened: " + _summary(widened), tool=name))
    if changed:
        out.append(change("schema_changed", "input schema changed: " + _summary(changed), tool=name))
    return out


def _output_schema(name: str, old: dict[str, Any], new: dict[str, Any]) -> list[Change]:
    deltas = compare_schemas(old.get("outputSchema"), new.get("outputSchema"))
    if not deltas:
        return []
    return [change("output_schema_changed", "output schema changed: " + _summary(deltas), tool=name,
                   old=stored(old.get("outputSchema")), new=stored(new.get("outputSchema")))]


def _annotations(name: str, old: dict[str, Any], new: dict[str, Any]) -> list[Change]:
    deltas = compare_annotations(old.get("annotations"), new.get("annotations"))
    if not deltas:
        return []
    message = "annotations changed: " + "; ".join(d.detail for d in deltas)
    return [change("annotations_changed", message, tool=name, severity=worst([d.severity for d in deltas]),
                   old=stored(old.get("annotations")), new=stored(new.get("annotations")))]


def _meta(name: str, old: dict[str, Any], new: dict[str, Any]) -> list[Change]:
    before, after = old.get("_meta"), new.get("_meta")
    if same_json(before, after):
        return []
    return [change("meta_changed", f"_meta changed: {quoted(before)} -> {quoted(after)}", tool=name,
                   old=stored(before), new=stored(after))]


def _other_fields(name: str, old: dict[str, Any], new: dict[str, Any]) -> list[Change]:
    moved = sorted(k for k in (set(old) | set(new)) - KNOWN_FIELDS
                   if not same_json(old.get(k), new.get(k)) or (k in old) != (k in new))
    if not moved:
        return []
    return [change("definition_changed", "changed fields: " + ", ".join(quoted(k) for k in moved), tool=name)]


def _summary(deltas: list[SchemaDelta], limit: int = 12) -> str:
    parts = [f"{display_path(d.path)}: {d.detail}" for d in deltas[:limit]]
    if len(deltas) > limit:
        parts.append(f"and {len(deltas) - limit} more")
    return "; ".join(parts)


_CHECKS: tuple[Callable[[str, dict[str, Any], dict[str, Any]], list[Change]], ...] = (
    _name, _description, _titles, _input_schema, _output_schema, _annotations, _meta, _other_fields)
