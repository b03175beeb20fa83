"""Reading the fields of a served tool definition (a wire-format dict, camelCase; snake_case accepted too)."""

from __future__ import annotations

import re
from typing import Any



def tool_name(tool: dict[str, Any]) -> str:
    """The tool's name, or an empty string when the server sent none or not a string."""
    name = tool.get("name")
    return name if isinstance(name, str) else ""


def tool_description(tool: dict[str, Any]) -> str:
    description = tool.get("description")
    return description if isinstance(description, str) else ""


def input_schema(tool: dict[str, Any]) -> dict[str, Any]:
    """The tool's input schema; an empty object schema when missing or not an object."""
    schema = tool.get("inputSchema", tool.get("input_schema"))
    return schema if isinstance(schema, dict) else {"type": "object"}


def annotation(tool: dict[str, Any], camel_name: str) -> Any:
    """An annotation value (e.g. "readOnlyHint"), looked up under its camelCase or snake_case name; None if unset."""
    annotations = tool.get("annotations")
    if not isinstance(annotations, dict):
        return None
    if camel_name in annotations:
        return annotations[camel_name]
    return annotations.get(snake_case(camel_name))


def snake_case(name: str) -> str:
    return re.sub(r"(?<=[a-z0-9])(?=[A-Z])", "_", name).lower()

