"""Validation against the vendored Agent Plugins 1.0.0 schemas (scanner/plugins/schemas/, see NOTICE.md there),
offline, with the jsonschema library (Draft 2020-12, the dialect the schemas declare)."""

from __future__ import annotations

import json
from dataclasses import dataclass
from functools import cache
from importlib import resources
from typing import Any

from jsonschema import Draft202012Validator

from sandbox.core.untrusted import escape_for_terminal

PLUGIN_SCHEMA_ID = "https://agent-plugins.org/schemas/1.0.0/plugin.schema.json"
MCP_SCHEMA_ID = "https://agent-plugins.org/schemas/1.0.0/mcp.schema.json"
VARIANTS = {"stdio": "stdioServer", "streamable-http": "streamableHttpServer", "sse": "sseServer"}


@cache
def vendored(name: str) -> dict[str, Any]:
    """plugin.schema.json or mcp.schema.json, as shipped in the package."""
    text = resources.files("scanner.plugins").joinpath("schemas", name).read_text("utf-8")
    return json.loads(text)


@dataclass(frozen=True)
class SchemaError:
    path: list[str]  # the key path of the failing value (array indices as text)
    keyword: str  # the schema keyword that failed: required, type, pattern, additionalProperties, propertyNames …
    message: str  # one line, escaped

    @property
    def field(self) -> str:
        return ".".join(self.path)


def _errors(schema: dict[str, Any], value: Any) -> list[SchemaError]:
    found = []
    for error in sorted(Draft202012Validator(schema).iter_errors(value), key=lambda e: list(map(str, e.path))):
        keyword = "propertyNames" if "propertyNames" in error.schema_path else str(error.validator)
        found.append(SchemaError([str(p) for p in error.path], keyword,
                                 escape_for_terminal(" ".join(error.message.split()), 300)))
    return found


def manifest_errors(manifest: Any) -> list[SchemaError]:
    """plugin.json against plugin.schema.json with `extensions` opened: §8.1 forbids validating what a namespace
    holds, and its own type is checked by hand (PLUGIN_EXTENSIONS_NOT_OBJECT)."""
    schema = dict(vendored("plugin.schema.json"))
    schema["properties"] = {**schema["properties"], "extensions": True}
    return _errors(schema, manifest)


def manifest_fields() -> set[str]:
    return set(vendored("plugin.schema.json")["properties"])


def mcp_root_errors(document: Any) -> list[SchemaError]:
    """mcp.json's root only (mcpServers must be an object); each server is validated on its own (server_errors),
    so one bad entry does not hide the others."""
    schema = dict(vendored("mcp.schema.json"))
    schema["properties"] = {**schema["properties"], "mcpServers": {"type": "object"}}
    return _errors(schema, document)


def server_errors(transport: str, server: Any) -> list[SchemaError]:
    """One server entry against the closed variant its `type` names (stdio, streamable-http or sse)."""
    schema = vendored("mcp.schema.json")
    one = {"$schema": schema["$schema"], "$defs": schema["$defs"], "$ref": f"#/$defs/{VARIANTS[transport]}"}
    return _errors(one, server)
