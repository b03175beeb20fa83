"""S3 untyped-or-undescribed-parameter: parameters with no type or description; malformed schemas."""

from __future__ import annotations

from collections.abc import Iterator

from scanner.report.model import Finding
from scanner.rules.registry import rule
from scanner.rules.static.context import MAX_DEPTH, LintContext, ToolView

RULE = rule("S3")


TYPE_KEYS = ("type", "enum", "const", "anyOf", "oneOf", "allOf", "$ref", "not")


def _schema_findings(tool: ToolView) -> Iterator[Finding]:
    schema = tool.schema
    if schema is None:
        yield RULE.finding(tool.name, "tool has no inputSchema (the MCP spec requires one)",
                           fix="Add `inputSchema: {\"type\": \"object\"}` even when the tool takes no input.")
        return
    if not isinstance(schema, dict):
        yield RULE.finding(tool.name, f"inputSchema is a {type(schema).__name__}, not a JSON object", severity="error")
        return
    if schema.get("properties") and "type" not in schema:
        yield RULE.finding(tool.name, "inputSchema has properties but no top-level `type`")
    elif "type" in schema and schema["type"] != "object":
        yield RULE.finding(tool.name, f"inputSchema type is {schema['type']!r}, not \"object\"", severity="error")
    properties = schema.get("properties")
    if properties is not None and not isinstance(properties, dict):
        yield RULE.finding(tool.name, "inputSchema.properties is not a JSON object", severity="error")


def _param_findings(tool: ToolView) -> Iterator[Finding]:
    for param in tool.params:
        if not param.is_object:
            yield RULE.finding(tool.name, f"schema of parameter `{param.name}` is not a JSON object", severity="error",
                               evidence=param.name)
            continue
        if not any(key in param.schema for key in TYPE_KEYS):
            yield RULE.finding(tool.name, f"parameter `{param.name}` has no type or enum", evidence=param.name)
        if not param.description:
            yield RULE.finding(tool.name, f"parameter `{param.name}` has no description", severity="info",
                               evidence=param.name)


def rejected_finding(name: str, problem: str) -> Finding:
    """A served tool the MCP SDK's Tool model rejects (seen live: the listing kept the page's other tools)."""
    return RULE.finding(name, f"tool definition is not a valid MCP Tool ({problem}): an MCP client drops it, and one "
                        "that validates the page as a whole loses every tool on the page", severity="error",
                        evidence=problem,
                        fix="Serve every tool with a string `name` and an object `inputSchema`, as the MCP spec requires.")


def check(ctx: LintContext) -> Iterator[Finding]:
    for tool in ctx.tools:
        if not isinstance(tool.raw, dict):
            yield RULE.finding(tool.name, f"tool entry is a {type(tool.raw).__name__}, not a JSON object",
                               severity="error")
            continue
        if tool.walk.too_deep:
            yield RULE.finding(tool.name, f"definition is nested deeper than {MAX_DEPTH} levels; the rest was not read",
                               severity="error")
        if tool.walk.too_many_nodes:
            yield RULE.finding(tool.name, "definition has too many nodes; the rest was not read", severity="error")
        yield from _schema_findings(tool)
        yield from _param_findings(tool)
