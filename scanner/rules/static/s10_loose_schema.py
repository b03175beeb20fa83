"""S10 loose-schema: schemas that accept anything, catch-all properties, optional critical fields."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

from scanner.report.model import Finding
from scanner.rules.registry import rule
from scanner.rules.static.context import MAX_DEPTH, LintContext, Param, ToolView
from scanner.vocabulary import READ_GROUPS

RULE = rule("S10")

CATCH_ALL = frozenset({"payload", "data", "body", "params", "parameters", "options", "opts", "args", "arguments",
                       "kwargs", "input", "config", "extra", "extras", "misc", "object", "json", "raw"})

CRITICAL = frozenset({"path", "file_path", "filepath", "url", "uri", "command", "cmd", "endpoint"})


def _open_objects(schema: Any) -> Iterator[str]:
    """Paths of sub-schemas with additionalProperties: true (iterative, depth-bounded)."""
    stack: list[tuple[Any, str, int]] = [(schema, "inputSchema", 0)]
    while stack:
        node, path, depth = stack.pop()
        if depth > MAX_DEPTH:
            continue
        if isinstance(node, dict):
            if node.get("additionalProperties") is True:
                yield path
            for key, child in node.items():
                if isinstance(child, (dict, list)):
                    stack.append((child, f"{path}.{key}", depth + 1))
        elif isinstance(node, list):
            stack.extend((child, f"{path}[{i}]", depth + 1) for i, child in enumerate(node)
                         if isinstance(child, (dict, list)))


def _is_unconstrained(param: Param) -> bool:
    schema = param.schema
    if not isinstance(schema, dict):
        return False
    kinds = ("type", "enum", "const", "anyOf", "oneOf", "allOf", "$ref")
    if not any(k in schema for k in kinds):
        return True
    is_object = schema.get("type") == "object"
    return is_object and not schema.get("properties") and schema.get("additionalProperties") in (None, True)


def _tool_findings(tool: ToolView) -> Iterator[Finding]:
    for path in _open_objects(tool.schema):
        yield RULE.finding(tool.name, f"{path} sets additionalProperties: true", evidence=path)
    for param in tool.params:
        if param.name.lower() in CATCH_ALL and _is_unconstrained(param):
            yield RULE.finding(tool.name, f"catch-all parameter `{param.name}` accepts anything", evidence=param.name)
    if tool.verb in READ_GROUPS:
        return
    for param in tool.params:
        if param.name.lower() in CRITICAL and not param.required:
            yield RULE.finding(tool.name, f"critical parameter `{param.name}` is not required", evidence=param.name)


def check(ctx: LintContext) -> Iterator[Finding]:
    for tool in ctx.tools:
        if isinstance(tool.schema, dict):
            yield from _tool_findings(tool)
