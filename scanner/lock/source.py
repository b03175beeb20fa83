"""Read a saved tools/list result (or a saved mcp-sandbox JSON report) as the input of an offline lock."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

from pydantic import ValidationError

from scanner.errors import UsageError
from scanner.lock.canonical import MAX_DEPTH, json_depth
from scanner.lock.io import read_json_file
from scanner.report.model import Report, ServerInfo, TargetInfo

MAX_INPUT_BYTES = 32 * 1024 * 1024


@dataclass(frozen=True)
class LockSource:
    report: Report
    instructions_known: bool


def load_source(path: Path) -> LockSource:
    """`{"tools": [...], "instructions"?, "serverInfo"?, "prompts"?, ...}`, a bare array of tools, a JSON-RPC
    response wrapping either, or a saved mcp-sandbox report."""
    data = read_json_file(path, "input", MAX_INPUT_BYTES)
    if isinstance(data, dict) and isinstance(data.get("result"), (dict, list)) and "jsonrpc" in data:
        data = data["result"]
    if isinstance(data, dict) and "schema_version" in data and "target" in data:
        return LockSource(report=_report(data, path), instructions_known=True)
    if isinstance(data, list):
        data = {"tools": data}
    if not isinstance(data, dict) or "tools" not in data:
        raise UsageError(f"input {path} is not a tools/list result: expected {{\"tools\": [...]}} or a JSON array")
    return LockSource(report=_report_from_listing(data, path), instructions_known="instructions" in data)


def _report(data: dict[str, Any], path: Path) -> Report:
    try:
        return Report.model_validate(data)
    except ValidationError as exc:
        first = exc.errors()[0]
        where = ".".join(str(p) for p in first["loc"]) or "(top level)"
        raise UsageError(f"input {path} looks like an mcp-sandbox report but is malformed at {where}: "
                         f"{first['msg']}") from None


def _report_from_listing(data: dict[str, Any], path: Path) -> Report:
    return Report(
        target=TargetInfo(kind="file", name=path.name, requested=str(path)),
        server=_server_info(data, path),
        tools=_object_list(data, "tools", path),
        prompts=_object_list(data, "prompts", path),
        resources=_object_list(data, "resources", path),
        resource_templates=_object_list(data, "resourceTemplates", path),
    )


def _object_list(data: dict[str, Any], key: str, path: Path) -> list[dict[str, Any]]:
    value = data.get(key, [])
    if not isinstance(value, list):
        raise UsageError(f"input {path}: `{key}` must be a JSON array, not {_json_type(value)}")
    for index, item in enumerate(value):
        if not isinstance(item, dict):
            raise UsageError(f"input {path}: `{key}[{index}]` must be an object, not {_json_type(item)}")
        if json_depth(item) > MAX_DEPTH:
            raise UsageError(f"input {path}: `{key}[{index}]` nests deeper than {MAX_DEPTH} levels, too deep to "
                             "pin; `mcp-sandbox check` reports such definitions")
    return value


def _server_info(data: dict[str, Any], path: Path) -> ServerInfo:
    info = data.get("serverInfo") or {}
    capabilities = data.get("capabilities") or {}
    instructions = data.get("instructions")
    if not isinstance(info, dict):
        raise UsageError(f"input {path}: `serverInfo` must be an object, not {_json_type(info)}")
    if not isinstance(capabilities, dict):
        raise UsageError(f"input {path}: `capabilities` must be an object, not {_json_type(capabilities)}")
    if instructions is not None and not isinstance(instructions, str):
        raise UsageError(f"input {path}: `instructions` must be a string, not {_json_type(instructions)}")
    return ServerInfo(
        name=_optional_str(info.get("name")),
        version=_optional_str(info.get("version")),
        protocol_version=_optional_str(data.get("protocolVersion")),
        capabilities=capabilities,
        instructions=instructions,
    )


def _optional_str(value: Any) -> str | None:
    return value if isinstance(value, str) else None


def _json_type(value: Any) -> str:
    names = {dict: "an object", list: "an array", str: "a string", bool: "a boolean", type(None): "null"}
    return names.get(type(value), "a number")
