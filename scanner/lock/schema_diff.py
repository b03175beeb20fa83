"""Compare two JSON Schemas keyword by keyword, following sub-schemas, and sort each difference into one of three
effects: `text` (words the model reads), `widened` (the schema may now accept, or demand, more than it did) and
`changed` (any other difference). When a difference cannot be shown to be harmless it counts as widened."""

from __future__ import annotations

import math
from dataclasses import dataclass, replace
from fractions import Fraction
from typing import Any, Callable, Literal

from scanner.lock.canonical import canonical_json, same_json
from scanner.lock.schema_text import MAX_DEPTH, TEXT_KEYWORDS, new_words, pointer as _child

Effect = Literal["text", "widened", "changed"]

UPPER_LIMITS = ("maxLength", "maxItems", "maxProperties", "maximum", "maxContains")
LOWER_LIMITS = ("minLength", "minItems", "minProperties", "minimum", "minContains")
EXCLUSIVE_LIMITS = {"exclusiveMaximum": "upper", "exclusiveMinimum": "lower"}
UNPROVABLE_WHEN_CHANGED = ("pattern", "format")
OPEN_WHEN_ABSENT = ("additionalProperties", "unevaluatedProperties", "additionalItems", "unevaluatedItems",
                    "propertyNames", "contains")
BRANCH_LISTS = ("anyOf", "oneOf", "allOf")
REFERENCES = ("$ref", "$dynamicRef", "$recursiveRef")
# What a reference resolves to, and which dialect the keywords are read in: moving an anchor or a base URI can point an
# unchanged `$ref` at another sub-schema, and another `$schema` changes what `items` or `exclusiveMaximum` mean.
REFERENCE_TARGETS = ("$id", "$anchor", "$dynamicAnchor", "$recursiveAnchor", "$schema", "$vocabulary")
CONDITIONAL_BRANCHES = ("then", "else")
OPAQUE_ANY_CHANGE = ("not", "if", "dependentRequired", "dependencies")
SCHEMA_MAPS = ("properties", "patternProperties", "$defs", "definitions", "dependentSchemas")
POSITIONAL = ("prefixItems",)


@dataclass(frozen=True)
class SchemaDelta:
    effect: Effect
    path: str
    detail: str
    old: str | None = None
    new: str | None = None


def compare_schemas(old: Any, new: Any) -> list[SchemaDelta]:
    """Every difference between two schemas (None means the schema is absent); then the words the structural walk
    did not report as text or a widening (a `const` added, descriptions in a sub-schema that appeared, prose under
    an unknown keyword), each as text in place of the `changed` it was filed as."""
    out: list[SchemaDelta] = []
    _compare(old, new, "", 0, out)
    if not out:
        return out
    covered = {d.path for d in out if d.effect != "changed"}
    words = [SchemaDelta("text", w.path, w.detail, as_text(w.old), as_text(w.new))
             for w in new_words(old, new, covered, HANDLED)]
    worded = {d.path for d in words}
    return [d for d in out if d.effect != "changed" or d.path not in worded] + words


def display_path(path: str) -> str:
    return path or "(root)"


def as_text(value: Any) -> str | None:
    if value is None:
        return None
    return value if isinstance(value, str) else canonical_json(value).decode("utf-8")


def _compare(old: Any, new: Any, path: str, depth: int, out: list[SchemaDelta]) -> None:
    if same_json(old, new):
        return
    if depth >= MAX_DEPTH:
        out.append(SchemaDelta("widened", path, f"nested deeper than {MAX_DEPTH} levels; compared as a whole"))
        return
    if not isinstance(old, dict) or not isinstance(new, dict):
        out.append(_whole_schema_delta(old, new, path))
        return
    for check in _KEYWORD_CHECKS:
        check(old, new, path, depth, out)
    _other_keywords(old, new, path, out)


def _accepts_anything(schema: Any) -> bool:
    return schema is None or schema is True or schema == {}


def _whole_schema_delta(old: Any, new: Any, path: str) -> SchemaDelta:
    if _accepts_anything(new) and not _accepts_anything(old):
        return SchemaDelta("widened", path, "the schema now accepts anything")
    if _accepts_anything(old) or new is False:
        return SchemaDelta("changed", path, f"schema restricted: {_brief(old)} -> {_brief(new)}")
    return SchemaDelta("widened", path, f"schema replaced: {_brief(old)} -> {_brief(new)}")


def _brief(value: Any, limit: int = 80) -> str:
    text = "absent" if value is None else canonical_json(value).decode("utf-8")
    return text if len(text) <= limit else text[:limit] + "..."


def _text(old: dict[str, Any], new: dict[str, Any], path: str, depth: int, out: list[SchemaDelta]) -> None:
    for key in TEXT_KEYWORDS:
        if not same_json(old.get(key), new.get(key)):
            out.append(SchemaDelta("text", _child(path, key), f"{key} changed",
                                   as_text(old.get(key)), as_text(new.get(key))))


def _type_set(schema: dict[str, Any]) -> set[str] | None:
    value = schema.get("type")
    if value is None:
        return None
    if isinstance(value, str):
        return {value}
    if isinstance(value, list) and all(isinstance(v, str) for v in value):
        return set(value)
    return {canonical_json(value).decode("utf-8")}


def _types(old: dict[str, Any], new: dict[str, Any], path: str, depth: int, out: list[SchemaDelta]) -> None:
    before, after = _type_set(old), _type_set(new)
    if before == after:
        return
    where = _child(path, "type")
    if after is None:
        out.append(SchemaDelta("widened", where, f"type constraint removed (was {sorted(before or [])})"))
        return
    if before is None:
        out.append(SchemaDelta("changed", where, f"type constraint added: {sorted(after)}"))
        return
    added = after - before - ({"integer"} if "number" in before else set())
    effect: Effect = "widened" if added else "changed"
    out.append(SchemaDelta(effect, where, f"type {sorted(before)} -> {sorted(after)}"))


def _enum(old: dict[str, Any], new: dict[str, Any], path: str, depth: int, out: list[SchemaDelta]) -> None:
    before, after = old.get("enum"), new.get("enum")
    if same_json(before, after):
        return
    where = _child(path, "enum")
    if after is None:
        out.append(SchemaDelta("widened", where, "enum removed: any value of the type is accepted"))
    elif before is None:
        out.append(SchemaDelta("changed", where, "enum added"))
    elif isinstance(before, list) and isinstance(after, list):
        old_values = {canonical_json(v) for v in before}
        added = [as_text(v) for v in after if canonical_json(v) not in old_values]
        if added:
            out.append(SchemaDelta("widened", where, f"enum values added: {', '.join(str(a) for a in added)}"))
        else:
            out.append(SchemaDelta("changed", where, "enum values removed or reordered"))
    else:
        out.append(SchemaDelta("widened", where, "enum replaced"))


def _const(old: dict[str, Any], new: dict[str, Any], path: str, depth: int, out: list[SchemaDelta]) -> None:
    if same_json(old.get("const"), new.get("const")) and ("const" in old) == ("const" in new):
        return
    where = _child(path, "const")
    if "const" not in new:
        out.append(SchemaDelta("widened", where, "const removed"))
    elif "const" not in old:
        out.append(SchemaDelta("changed", where, "const added"))
    else:
        out.append(SchemaDelta("widened", where, f"const {_brief(old['const'])} -> {_brief(new['const'])}"))


def _is_number(value: Any) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool)


def _limit_delta(key: str, before: Any, after: Any, looser: Callable[[float, float], bool], path: str) -> SchemaDelta:
    where = _child(path, key)
    if after is None:
        return SchemaDelta("widened", where, f"{key} removed (was {_brief(before)})")
    if before is None:
        return SchemaDelta("changed", where, f"{key} added ({_brief(after)})")
    if _is_number(before) and _is_number(after):
        effect: Effect = "widened" if looser(before, after) else "changed"
        verb = "loosened" if effect == "widened" else "tightened"
        return SchemaDelta(effect, where, f"{key} {verb}: {_brief(before)} -> {_brief(after)}")
    if before is True:  # draft-4 boolean exclusiveMaximum/exclusiveMinimum turned off
        return SchemaDelta("widened", where, f"{key} true -> {_brief(after)}")
    if _is_number(before):  # a validator ignores, or a client drops, a limit that is not a number
        return SchemaDelta("widened", where, f"{key} is no longer a number: {_brief(before)} -> {_brief(after)}")
    return SchemaDelta("changed", where, f"{key} {_brief(before)} -> {_brief(after)}")


def _limits(old: dict[str, Any], new: dict[str, Any], path: str, depth: int, out: list[SchemaDelta]) -> None:
    for key in UPPER_LIMITS + LOWER_LIMITS + tuple(EXCLUSIVE_LIMITS):
        before, after = old.get(key), new.get(key)
        if same_json(before, after):
            continue
        upper = key in UPPER_LIMITS or EXCLUSIVE_LIMITS.get(key) == "upper"
        looser = (lambda b, a: a > b) if upper else (lambda b, a: a < b)
        out.append(_limit_delta(key, before, after, looser, path))


def _unprovable(old: dict[str, Any], new: dict[str, Any], path: str, depth: int, out: list[SchemaDelta]) -> None:
    for key in UNPROVABLE_WHEN_CHANGED:
        before, after = old.get(key), new.get(key)
        if same_json(before, after):
            continue
        if before is None:
            out.append(SchemaDelta("changed", _child(path, key), f"{key} added"))
        else:
            out.append(SchemaDelta("widened", _child(path, key), f"{key} {_brief(before)} -> {_brief(after)}"))
    if old.get("uniqueItems") is True and new.get("uniqueItems") is not True:
        out.append(SchemaDelta("widened", _child(path, "uniqueItems"), "uniqueItems no longer required"))
    elif not same_json(old.get("uniqueItems"), new.get("uniqueItems")):
        out.append(SchemaDelta("changed", _child(path, "uniqueItems"), "uniqueItems changed"))
    before, after = old.get("multipleOf"), new.get("multipleOf")
    if not same_json(before, after):
        effect: Effect = "changed" if before is None or _multiple_of(after, before) else "widened"
        out.append(SchemaDelta(effect, _child(path, "multipleOf"), f"multipleOf {_brief(before)} -> {_brief(after)}"))


def _multiple_of(after: Any, before: Any) -> bool:
    """True when every multiple of `after` is a multiple of `before` (4 after 2: tighter; 2 after 4 admits 6), exactly:
    the binary values compared as fractions. Anything else (a non-number, zero, negative) is not shown to be tighter."""
    if not (_is_number(after) and _is_number(before) and math.isfinite(after) and math.isfinite(before)):
        return False
    if before <= 0 or after <= 0:
        return False
    return (Fraction(after) / Fraction(before)).denominator == 1


def _string_set(value: Any) -> set[str] | None:
    if isinstance(value, list) and all(isinstance(v, str) for v in value):
        return set(value)
    return None


def _required(old: dict[str, Any], new: dict[str, Any], path: str, depth: int, out: list[SchemaDelta]) -> None:
    before, after = old.get("required"), new.get("required")
    if same_json(before, after):
        return
    where = _child(path, "required")
    old_set, new_set = _string_set(before or []), _string_set(after or [])
    if old_set is None or new_set is None:
        out.append(SchemaDelta("widened", where, "required replaced by a value that is not a list of names"))
        return
    if new_set - old_set:
        out.append(SchemaDelta("widened", where, f"newly required: {', '.join(sorted(new_set - old_set))}"))
    if old_set - new_set:
        out.append(SchemaDelta("changed", where, f"no longer required: {', '.join(sorted(old_set - new_set))}"))


def _schema_maps(old: dict[str, Any], new: dict[str, Any], path: str, depth: int, out: list[SchemaDelta]) -> None:
    for key in SCHEMA_MAPS:
        before, after = old.get(key), new.get(key)
        if same_json(before, after):
            continue
        if not isinstance(before or {}, dict) or not isinstance(after or {}, dict):
            out.append(SchemaDelta("widened", _child(path, key), f"{key} replaced by a non-object"))
            continue
        _schema_map(key, before or {}, after or {}, path, depth, out)


# What a new and a removed name under each schema map mean for the set of accepted inputs: (added, removed).
_NAME_CHANGE_MEANS: dict[str, tuple[tuple[Effect, str], tuple[Effect, str]]] = {
    "properties": (("widened", "new parameter"), ("changed", "parameter removed")),
    "patternProperties": (("widened", "new pattern property"), ("changed", "pattern property removed")),
    "$defs": (("changed", "definition added"), ("changed", "definition removed")),
    "definitions": (("changed", "definition added"), ("changed", "definition removed")),
    "dependentSchemas": (("changed", "dependent schema added"), ("widened", "dependent schema removed")),
}


def _schema_map(key: str, before: dict[str, Any], after: dict[str, Any], path: str, depth: int,
                out: list[SchemaDelta]) -> None:
    for name in after:
        if name not in before:
            effect, words = _NAME_CHANGE_MEANS[key][0]
            out.append(SchemaDelta(effect, _child(path, key, name), f"{words}: {name!r}"))
    for name in before:
        if name not in after:
            effect, words = _NAME_CHANGE_MEANS[key][1]
            out.append(SchemaDelta(effect, _child(path, key, name), f"{words}: {name!r}"))
        else:
            _compare(before[name], after[name], _child(path, key, name), depth + 1, out)


def _open_when_absent(old: dict[str, Any], new: dict[str, Any], path: str, depth: int,
                      out: list[SchemaDelta]) -> None:
    keys = OPEN_WHEN_ABSENT + (("items",) if not isinstance(old.get("items") or new.get("items"), list) else ())
    for key in keys:
        before, after = old.get(key), new.get(key)
        if same_json(before, after):
            continue
        where = _child(path, key)
        if _accepts_anything(after) and not _accepts_anything(before):
            out.append(SchemaDelta("widened", where, f"{key} no longer restricted (was {_brief(before)})"))
        elif _accepts_anything(before):
            out.append(SchemaDelta("changed", where, f"{key} {_brief(before)} -> {_brief(after)}"))
        elif before is False:
            out.append(SchemaDelta("widened", where, f"{key} false -> {_brief(after)}"))
        else:
            start = len(out)
            _compare(before, after, where, depth + 1, out)
            if key == "contains" and ("maxContains" in old or "maxContains" in new):
                _narrowing_widens(out, start, "under maxContains, fewer matching items pass the upper bound")


def _positional(old: dict[str, Any], new: dict[str, Any], path: str, depth: int, out: list[SchemaDelta]) -> None:
    keys = POSITIONAL + (("items",) if isinstance(old.get("items") or new.get("items"), list) else ())
    for key in keys:
        before, after = old.get(key), new.get(key)
        if same_json(before, after):
            continue
        if not isinstance(before, list) or not isinstance(after, list):
            out.append(SchemaDelta("widened", _child(path, key), f"{key} {_brief(before)} -> {_brief(after)}"))
            continue
        if len(after) < len(before):
            out.append(SchemaDelta("widened", _child(path, key), f"{key}: {len(before)} -> {len(after)} positions"))
        elif len(after) > len(before):
            out.append(SchemaDelta("changed", _child(path, key), f"{key}: {len(before)} -> {len(after)} positions"))
        for index in range(min(len(before), len(after))):
            _compare(before[index], after[index], _child(path, key, index), depth + 1, out)


def _branches(old: dict[str, Any], new: dict[str, Any], path: str, depth: int, out: list[SchemaDelta]) -> None:
    for key in BRANCH_LISTS:
        before, after = old.get(key), new.get(key)
        if same_json(before, after):
            continue
        where = _child(path, key)
        if isinstance(before, list) and isinstance(after, list) and len(before) == len(after):
            start = len(out)
            for index, (b, a) in enumerate(zip(before, after, strict=True)):
                _compare(b, a, _child(path, key, index), depth + 1, out)
            if key == "oneOf":
                _narrowing_widens(out, start, "in oneOf, a narrower branch admits what two branches shared")
        else:
            detail = f"{key} changed: {_branch_count(before)} -> {_branch_count(after)}"
            out.append(SchemaDelta("widened", where, detail))


def _narrowing_widens(out: list[SchemaDelta], start: int, why: str) -> None:
    """Where the set accepted is not monotone in a sub-schema (a oneOf branch, `contains` under a `maxContains`), a
    narrowing there may accept more: each `changed` delta from `start` on counts as widened."""
    out[start:] = [replace(d, effect="widened", detail=f"{d.detail} ({why})") if d.effect == "changed" else d
                   for d in out[start:]]


def _branch_count(value: Any) -> str:
    if isinstance(value, list):
        return f"{len(value)} branches"
    return _brief(value)


def _conditionals(old: dict[str, Any], new: dict[str, Any], path: str, depth: int,
                  out: list[SchemaDelta]) -> None:
    for key in REFERENCES + REFERENCE_TARGETS + OPAQUE_ANY_CHANGE:
        if not same_json(old.get(key), new.get(key)):
            out.append(SchemaDelta("widened", _child(path, key),
                                   f"{key} changed: {_brief(old.get(key))} -> {_brief(new.get(key))}"))
    for key in CONDITIONAL_BRANCHES:
        before, after = old.get(key), new.get(key)
        if same_json(before, after):
            continue
        if isinstance(before, dict) and isinstance(after, dict):
            _compare(before, after, _child(path, key), depth + 1, out)
        else:
            out.append(SchemaDelta("widened", _child(path, key), f"{key} {_brief(before)} -> {_brief(after)}"))


_KEYWORD_CHECKS = (_text, _types, _enum, _const, _limits, _unprovable, _required, _schema_maps, _open_when_absent,
                   _positional, _branches, _conditionals)

HANDLED = frozenset(
    TEXT_KEYWORDS + UPPER_LIMITS + LOWER_LIMITS + tuple(EXCLUSIVE_LIMITS) + UNPROVABLE_WHEN_CHANGED
    + OPEN_WHEN_ABSENT + BRANCH_LISTS + REFERENCES + REFERENCE_TARGETS + CONDITIONAL_BRANCHES + OPAQUE_ANY_CHANGE
    + SCHEMA_MAPS + POSITIONAL + ("type", "enum", "const", "uniqueItems", "multipleOf", "required", "items")
)


def _other_keywords(old: dict[str, Any], new: dict[str, Any], path: str, out: list[SchemaDelta]) -> None:
    for key in sorted(set(old) | set(new)):
        if key not in HANDLED and not same_json(old.get(key), new.get(key)):
            out.append(SchemaDelta("changed", _child(path, key),
                                   f"{key} {_brief(old.get(key))} -> {_brief(new.get(key))}"))
