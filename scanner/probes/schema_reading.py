"""Reading a tool's (untrusted) JSON Schema: the type a schema describes, local `$ref`s, `allOf` merged into one
schema, the first usable `anyOf`/`oneOf` branch, the smallest value of a type and the JSON type of a value."""

from __future__ import annotations

import re
from typing import Any

# The string a generated argument holds when nothing says more: a word a user could type, never probe or test (a
# server reading its arguments looked for that word).
PLAIN_WORD = "notes"

# Python type -> JSON type name; bool before int (a bool is an int in Python).
_JSON_TYPES: tuple[tuple[type | tuple[type, ...], str], ...] = (
    (bool, "boolean"), (int, "integer"), (float, "number"), (str, "string"), (list, "array"), (dict, "object"),
)


def schema_type(schema: dict[str, Any]) -> str:
    """The schema's type (first non-null one of a list), inferred from its keywords when not given."""
    declared = schema.get("type")
    if isinstance(declared, list):
        declared = next((item for item in declared if item != "null"), declared[0] if declared else None)
    if isinstance(declared, str):
        return declared
    if "properties" in schema or "required" in schema or "additionalProperties" in schema:
        return "object"
    if "items" in schema or "prefixItems" in schema:
        return "array"
    if any(key in schema for key in ("minimum", "maximum", "exclusiveMinimum", "exclusiveMaximum", "multipleOf")):
        return "number"
    return "string"


def json_type_name(value: Any) -> str:
    """The JSON type of a Python value ("null" for anything else)."""
    return next((name for kind, name in _JSON_TYPES if isinstance(value, kind)), "null")


def minimal_value(schema: dict[str, Any]) -> Any:
    """The smallest value of the schema's type, without following anything (cycle and depth stop)."""
    return {"object": {}, "array": [], "integer": 0, "number": 0, "boolean": False, "null": None}.get(
        schema_type(schema), PLAIN_WORD)


def resolve_ref(root: dict[str, Any], ref: str) -> dict[str, Any] | None:
    """Resolve a local reference ("#", "#/$defs/x", "#/definitions/x", percent- and ~-escaped); None otherwise."""
    if not ref.startswith("#"):
        return None
    node: Any = root
    pointer = ref[1:]
    if pointer and not pointer.startswith("/"):
        return None
    for part in pointer.split("/")[1:] if pointer else []:
        part = re.sub(r"%([0-9A-Fa-f]{2})", lambda match: chr(int(match.group(1), 16)), part)
        part = part.replace("~1", "/").replace("~0", "~")
        if isinstance(node, dict) and part in node:
            node = node[part]
        elif isinstance(node, list) and part.isdigit() and int(part) < len(node):
            node = node[int(part)]
        else:
            return None
    return node if isinstance(node, dict) else None


def merge_all_of(schema: dict[str, Any]) -> dict[str, Any]:
    """The schema with its `allOf` parts folded in: properties and required lists joined, other keys first-wins."""
    merged: dict[str, Any] = {key: val for key, val in schema.items() if key != "allOf"}
    for part in schema["allOf"]:
        if not isinstance(part, dict):
            continue
        for key, val in part.items():
            if key == "properties" and isinstance(val, dict):
                merged["properties"] = {**merged.get("properties", {}), **val}
            elif key == "required" and isinstance(val, list):
                merged["required"] = list(dict.fromkeys([*merged.get("required", []), *val]))
            else:
                merged.setdefault(key, val)
    return merged


def first_viable(branches: list[Any], root: dict[str, Any]) -> dict[str, Any]:
    """The first branch that can hold a value: an object schema that is not `not`, false or only null."""
    dict_branches = [branch for branch in branches if isinstance(branch, dict)]
    for branch in dict_branches:
        if "not" in branch or branch.get("type") == "null":
            continue
        if "$ref" in branch and resolve_ref(root, str(branch["$ref"])) is None:
            continue
        return branch
    return dict_branches[0] if dict_branches else {}
