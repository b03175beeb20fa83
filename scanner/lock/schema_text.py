"""The words a JSON Schema puts before the model, found wherever they sit, so that no new or changed text hides behind
a change the structural walk (scanner.lock.schema_diff) files as a harmless narrowing: a `const` or `enum` added to a
parameter (the model is now steered to send that value), a sub-schema that appeared where none was (`items`,
`additionalProperties`, `$defs`, ...) carrying descriptions, or a keyword the scanner does not know holding prose."""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any

from scanner.lock.canonical import same_json

MAX_DEPTH = 64
TEXT_KEYWORDS = ("title", "description", "examples", "$comment", "default")
# Keywords whose values the model copies into its arguments: a value that was not there before is new text.
VALUE_KEYWORDS = ("enum", "const")
# Keywords the scanner knows that hold identifiers or flags, not words for the model.
NOT_WORDS = frozenset({"$schema", "$id", "$anchor", "$dynamicAnchor", "$vocabulary", "contentMediaType",
                       "contentEncoding", "readOnly", "writeOnly", "deprecated"})
# A `pattern` that matches one string only (anchored, no operator left once escapes are read) is a `const` spelled as a
# regex: `^attacker@evil\.example$` steers the model to that value as surely.
_LITERAL_PATTERN = re.compile(r"\^((?:[^\\.^$*+?()\[\]{}|]|\\[^A-Za-z0-9])+)\$")
_MAPS = ("properties", "patternProperties", "$defs", "definitions", "dependentSchemas", "dependencies")
_LISTS = ("prefixItems", "items", "anyOf", "oneOf", "allOf")
_SINGLE = ("additionalProperties", "unevaluatedProperties", "additionalItems", "unevaluatedItems", "propertyNames",
           "contains", "items", "not", "if", "then", "else")


@dataclass(frozen=True)
class NewWords:
    path: str
    keyword: str
    old: Any
    new: Any
    detail: str


def pointer(path: str, *parts: str | int) -> str:
    """A JSON Pointer one or more steps below `path`."""
    return path + "".join("/" + str(p).replace("~", "~0").replace("/", "~1") for p in parts)


def new_words(old: Any, new: Any, covered: set[str], known: frozenset[str]) -> list[NewWords]:
    """Each place in `new` whose words differ from `old` and that is not in `covered` (already reported as text or
    as a widening). `known` is every keyword the structural walk understands: any other keyword holding a string
    counts as words."""
    before, after = _words_by_path(old, known), _words_by_path(new, known)
    out: list[NewWords] = []
    for path, (keyword, value) in sorted(after.items()):
        previous = before.get(path, (keyword, None))[1]
        if path in covered or (path in before and same_json(previous, value)):
            continue
        if keyword in VALUE_KEYWORDS or keyword == "pattern":
            fresh = sorted(_strings(value) - _strings(previous))
            if fresh:
                out.append(NewWords(path, keyword, previous, value, f"{keyword} now names {', '.join(fresh)}"))
        else:
            out.append(NewWords(path, keyword, previous, value, f"{keyword} {'changed' if path in before else 'added'}"))
    return out


def _words_by_path(schema: Any, known: frozenset[str]) -> dict[str, tuple[str, Any]]:
    found: dict[str, tuple[str, Any]] = {}
    stack: list[tuple[Any, str, int]] = [(schema, "", 0)]
    while stack:
        node, path, depth = stack.pop()
        if not isinstance(node, dict) or depth > MAX_DEPTH:
            continue
        for key, value in node.items():
            where = pointer(path, key)
            if key in TEXT_KEYWORDS or key in VALUE_KEYWORDS or (key not in known and key not in NOT_WORDS
                                                                 and _strings(value)):
                found[where] = (key, value)
            elif key == "pattern" and isinstance(value, str) and (literal := literal_pattern(value)) is not None:
                found[where] = (key, literal)
            stack.extend(_sub_schemas(key, value, where, depth + 1))
    return found


def literal_pattern(pattern: str) -> str | None:
    """The one string a `pattern` matches when it is a literal (`^a\\.b$` → `a.b`); None for any other pattern."""
    match = _LITERAL_PATTERN.fullmatch(pattern)
    return None if match is None else re.sub(r"\\(.)", r"\1", match.group(1))


def _sub_schemas(key: str, value: Any, where: str, depth: int) -> list[tuple[Any, str, int]]:
    if key in _MAPS and isinstance(value, dict):
        return [(v, pointer(where, k), depth) for k, v in value.items()]
    if key in _LISTS and isinstance(value, list):
        return [(v, pointer(where, i), depth) for i, v in enumerate(value)]
    if key in _SINGLE and isinstance(value, dict):
        return [(value, where, depth)]
    return []


def _strings(value: Any) -> set[str]:
    """Every string inside a JSON value, object keys included (iteratively)."""
    found: set[str] = set()
    stack = [value]
    while stack:
        item = stack.pop()
        if isinstance(item, str):
            found.add(item)
        elif isinstance(item, dict):
            found.update(item)
            stack.extend(item.values())
        elif isinstance(item, list):
            stack.extend(item)
    return found
