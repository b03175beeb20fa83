"""Read a saved tools/list result from disk: `{"tools": [...]}` (with optional instructions, prompts,
serverInfo) or a bare array of tools. Every way it can be wrong ends in a one-line UsageError."""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from scanner.errors import UsageError

MAX_FILE_BYTES = 64 * 1024 * 1024


@dataclass(frozen=True)
class ToolsFile:
    tools: list[Any]
    prompts: list[Any] = field(default_factory=list)
    instructions: str | None = None
    server_info: dict[str, Any] = field(default_factory=dict)
    protocol_version: str | None = None
    payload_bytes: int = 0


def _read(path: Path) -> bytes:
    if not path.exists():
        raise UsageError(f"{path} does not exist; pass a saved tools/list JSON file")
    if not path.is_file():
        raise UsageError(f"{path} is not a regular file; pass a saved tools/list JSON file")
    size = path.stat().st_size
    if size > MAX_FILE_BYTES:
        raise UsageError(f"{path} is {size:,} bytes, over the {MAX_FILE_BYTES:,}-byte limit for a tools/list file")
    try:
        return path.read_bytes()
    except OSError as exc:
        raise UsageError(f"cannot read {path}: {exc.strerror or exc}") from exc


def _decode(path: Path, data: bytes) -> Any:
    try:
        text = data.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        raise UsageError(f"{path} is not valid UTF-8 (byte {exc.start}); save the tools/list result as UTF-8 JSON") \
            from exc
    try:
        return json.loads(text)
    except RecursionError as exc:
        raise UsageError(f"{path} is nested too deeply to read as JSON") from exc
    except json.JSONDecodeError as exc:
        raise UsageError(f"{path} is not valid JSON: {exc.msg} at line {exc.lineno} column {exc.colno}") from exc


def _optional(document: dict[str, Any], key: str, kind: type, path: Path) -> Any:
    value = document.get(key)
    if value is not None and not isinstance(value, kind):
        raise UsageError(f"{path}: `{key}` must be a JSON {'array' if kind is list else kind.__name__}")
    return value


def load_tools_file(path: Path) -> ToolsFile:
    """Parse the file; the shape is checked, the tools themselves are left to the rules."""
    data = _read(path)
    document = _decode(path, data)
    if isinstance(document, list):
        return ToolsFile(tools=document, payload_bytes=len(data))
    if not isinstance(document, dict):
        raise UsageError(f"{path}: expected an object with a `tools` array, or an array of tools")
    if isinstance(document.get("result"), dict) and "tools" not in document:  # a whole JSON-RPC response
        document = document["result"]
    tools = document.get("tools")
    if not isinstance(tools, list):
        raise UsageError(f"{path}: expected a `tools` array at the top level (a saved tools/list result)")
    server_info = _optional(document, "serverInfo", dict, path) or {}
    return ToolsFile(
        tools=tools,
        prompts=_optional(document, "prompts", list, path) or [],
        instructions=_optional(document, "instructions", str, path),
        server_info=server_info,
        protocol_version=_optional(document, "protocolVersion", str, path),
        payload_bytes=len(data),
    )
