"""Which JSON Schema dialect a tool schema is written in: the signs of draft-04/06/07 that mean something else (or
nothing valid) under 2020-12, which MCP reads tool schemas as.

Only schema positions are walked: the subschemas of applicator keywords (properties, $defs, items, allOf ...), never
the values of enum, const, default or examples, and never the keys of `properties` themselves, so a property named
`definitions` is a property. `$ref`s are read as strings, never followed, so a reference cycle cannot loop. The walk
stops at MAX_DEPTH levels or MAX_NODES schemas and says so (`DialectSigns.truncated`)."""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Any

MAX_DEPTH = 64
MAX_NODES = 10_000
OLD_DRAFT = re.compile(r"^https?://json-schema\.org/draft-0([3-7])/schema#?$")
# A declared dialect the walk trusts for what still works there (definitions, pointer refs).
TRUSTED_DRAFT = re.compile(r"^https?://json-schema\.org/draft/(2019-09|2020-12)/schema#?$")
SINGLE_SCHEMA = ("additionalProperties", "additionalItems", "contains", "propertyNames", "not", "if", "then", "else",
                 "unevaluatedProperties", "unevaluatedItems", "contentSchema")
SCHEMA_LISTS = ("allOf", "anyOf", "oneOf", "prefixItems")
SCHEMA_MAPS = ("properties", "patternProperties", "$defs", "definitions", "dependentSchemas")

DEFINITIONS = "definitions (2020-12: $defs)"
DEFINITIONS_REF = "$ref into #/definitions/ (2020-12: #/$defs/)"
BOOLEAN_BOUND = "boolean exclusiveMinimum/exclusiveMaximum (2020-12: the bound itself, a number)"
ARRAY_ITEMS = "array-form items (2020-12: prefixItems)"
INVALID_IN_2020 = (BOOLEAN_BOUND, ARRAY_ITEMS)


@dataclass
class DialectSigns:
    """What a schema shows of an old dialect: a declared one, and the forms found (each named once)."""

    declared: str | None = None  # e.g. draft-07, from `$schema`
    forms: list[str] = field(default_factory=list)
    truncated: bool = False  # the walk stopped at its bound

    @property
    def old(self) -> bool:
        return self.declared is not None or bool(self.forms)


def dialect_signs(schema: Any) -> DialectSigns:
    """The old-dialect signs of one tool schema (nothing for a value that is not a JSON object)."""
    signs = DialectSigns()
    if not isinstance(schema, dict):
        return signs
    declared = schema.get("$schema")
    if isinstance(declared, str) and (old := OLD_DRAFT.match(declared.strip())):
        signs.declared = f"draft-0{old.group(1)}"
        return signs
    found = _walk(schema, signs)
    if isinstance(declared, str) and TRUSTED_DRAFT.match(declared.strip()):
        found = [form for form in found if form in INVALID_IN_2020]
    signs.forms = found
    return signs


def _walk(root: dict[str, Any], signs: DialectSigns) -> list[str]:
    found: dict[str, None] = {}  # ordered set
    stack: list[tuple[dict[str, Any], int]] = [(root, 0)]
    nodes = 0
    while stack:
        node, depth = stack.pop()
        nodes += 1
        if nodes > MAX_NODES or depth > MAX_DEPTH:
            signs.truncated = True
            break
        for form in _forms_at(node):
            found.setdefault(form)
        stack.extend((child, depth + 1) for child in reversed(_subschemas(node)))
    return list(found)


def _forms_at(node: dict[str, Any]) -> list[str]:
    forms = []
    if isinstance(node.get("definitions"), dict):
        forms.append(DEFINITIONS)
    ref = node.get("$ref")
    if isinstance(ref, str) and ref.startswith("#/definitions/"):
        forms.append(DEFINITIONS_REF)
    if isinstance(node.get("exclusiveMinimum"), bool) or isinstance(node.get("exclusiveMaximum"), bool):
        forms.append(BOOLEAN_BOUND)
    if isinstance(node.get("items"), list):
        forms.append(ARRAY_ITEMS)
    return forms


def _subschemas(node: dict[str, Any]) -> list[dict[str, Any]]:
    """The subschemas at this node's schema positions (objects only: a boolean schema has nothing below it)."""
    children: list[Any] = []
    for key in SCHEMA_MAPS:
        if isinstance(node.get(key), dict):
            children.extend(node[key].values())
    children.extend(node.get(key) for key in SINGLE_SCHEMA)
    items = node.get("items")
    children.extend(items if isinstance(items, list) else [items])
    for key in SCHEMA_LISTS:
        if isinstance(node.get(key), list):
            children.extend(node[key])
    return [child for child in children if isinstance(child, dict)]
