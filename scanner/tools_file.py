"""The one reader of a saved tools/list, for `check`, `lock --from` and the tests: the same size limit, BOM handling
and one-line errors for every command.

Accepted shapes: `{"tools": [...]}` with optional `instructions`, `prompts`, `resources`, `resourceTemplates`,
`serverInfo`, `capabilities`, `protocolVersion`; a bare array of tools; a JSON-RPC response whose `result` is either;
or a JSON report that mcp-sandbox saved (`scan --json`, `check --json`). The shape is checked here; the definitions
themselves are left to the rules (`check`) or the lock (`lock --from`)."""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, BinaryIO

from pydantic import ValidationError

from scanner.errors import UsageError
from scanner.json_input import MAX_INPUT_BYTES, JsonInput, first_validation_error, read_json
from scanner.report.model import Report

MAX_FILE_BYTES = MAX_INPUT_BYTES
WHAT = "tools file"
_KINDS: dict[str, type] = {"tools": list, "prompts": list, "resources": list, "resourceTemplates": list,
                          "serverInfo": dict, "capabilities": dict, "instructions": str, "protocolVersion": str}
_WANTED = {list: "a JSON array", dict: "a JSON object", str: "a string"}


@dataclass(frozen=True)
class ToolsFile:
    name: str  # the path as given, or `standard input`
    tools: list[Any]
    prompts: list[Any] = field(default_factory=list)
    resources: list[Any] = field(default_factory=list)
    resource_templates: list[Any] = field(default_factory=list)
    instructions: str | None = None
    instructions_given: bool = False  # the file says what the instructions are (a bare array does not)
    server_info: dict[str, Any] = field(default_factory=dict)
    capabilities: dict[str, Any] = field(default_factory=dict)
    protocol_version: str | None = None
    payload_bytes: int = 0
    report: Report | None = None  # set when the file is a saved mcp-sandbox report
    text: str = field(default="", repr=False)  # what was parsed, to find where each definition starts


def json_type(value: Any) -> str:
    names = {dict: "an object", list: "an array", str: "a string", bool: "a boolean", type(None): "null"}
    return names.get(type(value), "a number")


def load_tools_file(source: Path | str, *, stdin: BinaryIO | None = None) -> ToolsFile:
    """Read and shape-check `source` (a path, or `-` for standard input); every problem is one UsageError line."""
    document = read_json(source, WHAT, max_bytes=MAX_FILE_BYTES, stdin=stdin)
    value = document.value
    if isinstance(value, dict) and "tools" not in value and isinstance(value.get("result"), (dict, list)):
        value = value["result"]  # a whole JSON-RPC response
    if isinstance(value, dict) and "schema_version" in value and "target" in value:
        return _from_report(document, _saved_report(value, document.name))
    if isinstance(value, list):
        value = {"tools": value}
    if not isinstance(value, dict) or "tools" not in value:
        raise UsageError(f"{WHAT} {document.name} is not a tools/list result: expected an object with a `tools` "
                         "array, or an array of tools")
    return _from_listing(document, value)


def _saved_report(value: dict[str, Any], name: str) -> Report:
    try:
        return Report.model_validate(value)
    except ValidationError as exc:
        raise UsageError(f"{WHAT} {name} looks like an mcp-sandbox report but is malformed "
                         f"{first_validation_error(exc)}") from None


def _check_kinds(document: dict[str, Any], name: str) -> None:
    """`tools` is an array; every other known key is absent, null, or of the JSON type it must have."""
    for key, kind in _KINDS.items():
        value = document.get(key)
        if (value is not None or key == "tools") and not isinstance(value, kind):
            raise UsageError(f"{WHAT} {name}: `{key}` must be {_WANTED[kind]}, not {json_type(value)}")


def _from_listing(document: JsonInput, value: dict[str, Any]) -> ToolsFile:
    _check_kinds(value, document.name)
    return ToolsFile(
        name=document.name, tools=value["tools"], prompts=value.get("prompts") or [],
        resources=value.get("resources") or [], resource_templates=value.get("resourceTemplates") or [],
        instructions=value.get("instructions"), instructions_given="instructions" in value,
        server_info=value.get("serverInfo") or {}, capabilities=value.get("capabilities") or {},
        protocol_version=value.get("protocolVersion"), payload_bytes=document.size, text=document.text)


def _from_report(document: JsonInput, report: Report) -> ToolsFile:
    server = report.server
    info = {key: value for key, value in (("name", server.name), ("version", server.version)) if value is not None}
    return ToolsFile(
        name=document.name, tools=report.tools, prompts=report.prompts, resources=report.resources,
        resource_templates=report.resource_templates, instructions=server.instructions, instructions_given=True,
        server_info=info, capabilities=server.capabilities, protocol_version=server.protocol_version,
        payload_bytes=len(json.dumps({"tools": report.tools}, ensure_ascii=False).encode()), report=report,
        text=document.text)
