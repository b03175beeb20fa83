"""Read the MCP server entries of client configs: Claude Desktop, Claude Code (~/.claude.json incl.
projects.*.mcpServers, .mcp.json), Cursor (mcp.json) and VS Code (mcp.json `servers`, settings.json `mcp.servers`).

Environment values are not kept, only their names, unless the caller asks (`scan --config-file --pass-config-env`
passes them to the server; nothing prints them). Remote entries keep only scheme and host.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

from scanner.errors import UsageError
from scanner.json_input import parse_json
from scanner.provenance.redact import origin_only

MAX_CONFIG_BYTES = 64 * 1024 * 1024
ConfigFormat = Literal["claude-desktop", "claude-code", "cursor", "vscode", "mcp-json"]
Transport = Literal["stdio", "remote", "unknown"]


@dataclass
class ServerEntry:
    name: str
    scope: str | None = None  # the project path for Claude Code project entries
    transport: Transport = "unknown"
    command: str | None = None  # kept in memory for linting; never printed whole
    args: list[str] = field(default_factory=list)
    env_names: list[str] = field(default_factory=list)
    env: dict[str, str] = field(default_factory=dict, repr=False)  # the values: only with keep_env, never printed
    remote: str | None = None  # scheme://host[:port] only
    disabled: bool = False
    problem: str | None = None  # why the entry could not be read
    url: str | None = field(default=None, repr=False)  # a remote entry's whole URL: for `scan` only, never printed
    remote_type: str | None = None  # a remote entry's `type` as written (http, streamable-http, sse), if any
    header_names: list[str] = field(default_factory=list)
    headers: dict[str, str] = field(default_factory=dict, repr=False)  # the values: only with keep_env
    cwd: str | None = None  # as written
    env_file: bool = False  # the entry names an `envFile` (VS Code), which nothing here reads


@dataclass
class ClientConfig:
    path: str
    format: ConfigFormat
    servers: list[ServerEntry]


def read_client_config(path: Path, keep_env: bool = False) -> ClientConfig:
    """Read one config file; a file that is missing, unreadable or not an MCP config is a UsageError. `keep_env`:
    also keep each entry's environment values (string, number or boolean ones)."""
    data = _load_json(path)
    fmt = _detect_format(path, data)
    raw_entries = _raw_entries(fmt, data)
    entries = [read_entry(name, raw, scope=scope) for name, raw, scope in raw_entries]
    if keep_env:
        for entry, (_, raw, _) in zip(entries, raw_entries):
            env = _object(_object(raw).get("env"))
            entry.env = {str(k): _env_text(v) for k, v in env.items() if isinstance(v, (str, int, float, bool))}
            headers = _object(_object(raw).get("headers"))
            entry.headers = {str(k): str(v) for k, v in headers.items() if isinstance(v, str)}
    return ClientConfig(str(path), fmt, entries)


def _env_text(value: str | int | float | bool) -> str:
    return ("true" if value else "false") if isinstance(value, bool) else str(value)


def _load_json(path: Path) -> dict[str, Any]:
    if not path.exists():
        raise UsageError(f"{path}: no such file; give the path of an MCP client config (e.g. ~/.claude.json)")
    if not path.is_file():
        raise UsageError(f"{path}: not a regular file (a folder, a pipe or a device); give the path of an MCP client "
                         "config file")
    if path.stat().st_size > MAX_CONFIG_BYTES:
        raise UsageError(f"{path}: larger than {MAX_CONFIG_BYTES // (1024 * 1024)} MiB; that is not an MCP config")
    try:
        text = path.read_bytes().decode("utf-8-sig")
    except OSError as exc:
        raise UsageError(f"{path}: cannot be read: {exc.strerror or exc}") from None
    except UnicodeDecodeError as exc:
        raise UsageError(f"{path}: not UTF-8 (byte {exc.start}); save it as UTF-8 JSON, as MCP clients read it") \
            from None
    data = parse_json(f"client config {path}", strip_jsonc(text))  # one reader: depth, long integers, lone surrogates
    if not isinstance(data, dict):
        raise UsageError(f"{path}: the top level is not a JSON object, so it is not an MCP client config")
    return data


# A JSON string (kept as it is; one left open runs to the end of its line, so no quote is scanned twice), or what
# JSONC allows outside one: a // or /* */ comment, or a trailing comma.
_STRING = r'"[^"\\\n]*(?:\\.[^"\\\n]*)*"|"[^\n]*'
_COMMENTS = re.compile(_STRING + r"|//[^\n]*|/\*.*?(?:\*/|\Z)", re.S)
_TRAILING_COMMAS = re.compile(_STRING + r"|,(?=[ \t\r\n]*[}\]])")
_ANY_TRAILING_COMMA = re.compile(r",[ \t\r\n]*[}\]]")


def _keep_strings(match: re.Match[str]) -> str:
    return match.group() if match.group().startswith('"') else ""


def strip_jsonc(text: str) -> str:
    """Remove // and /* */ comments, then trailing commas, outside strings (VS Code files are JSON with comments).
    Linear: each is one regular-expression pass that copies strings as they are."""
    if "/" in text:
        text = _COMMENTS.sub(_keep_strings, text)
    return _TRAILING_COMMAS.sub(_keep_strings, text) if _ANY_TRAILING_COMMA.search(text) else text


def _detect_format(path: Path, data: dict[str, Any]) -> ConfigFormat:
    if isinstance(data.get("servers"), dict) or isinstance(_get(data, "mcp", "servers"), dict):
        return "vscode"
    if isinstance(data.get("projects"), dict):
        return "claude-code"
    if isinstance(data.get("mcpServers"), dict):
        lowered = str(path).replace("\\", "/").lower()
        if "claude_desktop_config" in lowered:
            return "claude-desktop"
        if "/.cursor/" in lowered or lowered.startswith(".cursor/"):
            return "cursor"
        if lowered.endswith(".claude.json"):
            return "claude-code"
        return "mcp-json"
    raise UsageError(f"{path}: no MCP servers found (expected `mcpServers`, `projects.*.mcpServers`, `servers` or "
                     "`mcp.servers`); give a Claude Desktop, Claude Code, Cursor or VS Code MCP config")


def _get(data: dict[str, Any], *keys: str) -> Any:
    value: Any = data
    for key in keys:
        if not isinstance(value, dict):
            return None
        value = value.get(key)
    return value


def _object(value: Any) -> dict[str, Any]:
    """A slot that must hold an object: any other JSON type (a list, a string, null) holds no entries."""
    return value if isinstance(value, dict) else {}


def _raw_entries(fmt: ConfigFormat, data: dict[str, Any]) -> list[tuple[str, Any, str | None]]:
    """(name, entry, project) of every server entry, in file order."""
    if fmt == "vscode":
        servers = data.get("servers") if isinstance(data.get("servers"), dict) else _get(data, "mcp", "servers")
        return [(str(k), v, None) for k, v in _object(servers).items()]
    out = [(str(k), v, None) for k, v in _object(data.get("mcpServers")).items()]
    for project, settings in _object(data.get("projects")).items():
        servers = _object(_object(settings).get("mcpServers"))
        out.extend((str(k), v, str(project)) for k, v in servers.items())
    return out



def read_entry(name: str, raw: Any, scope: str | None = None) -> ServerEntry:
    """One server entry; anything malformed is kept as a problem (reported as I1), never raised."""
    entry = ServerEntry(name=name, scope=scope)
    if not isinstance(raw, dict):
        entry.problem = "the entry is not a JSON object"
        return entry
    entry.disabled = raw.get("disabled") is True
    env = raw.get("env")
    if isinstance(env, dict):
        entry.env_names = sorted(str(k) for k in env)
    url = raw.get("url", raw.get("serverUrl"))
    command = raw.get("command")
    entry.cwd = raw.get("cwd") if isinstance(raw.get("cwd"), str) else None
    entry.env_file = raw.get("envFile") is not None
    if isinstance(url, str) and not command:
        entry.transport, entry.remote, entry.url = "remote", origin_only(url), url
        entry.remote_type = raw.get("type") if isinstance(raw.get("type"), str) else None
        entry.header_names = sorted(str(k) for k in _object(raw.get("headers")))
        return entry
    if not isinstance(command, str) or not command.strip():
        entry.problem = "no `command` string and no `url`"
        return entry
    args = raw.get("args", [])
    if not isinstance(args, list) or not all(isinstance(a, (str, int, float)) for a in args):
        entry.problem = "`args` is not a list of strings"
        return entry
    entry.transport, entry.command, entry.args = "stdio", command, [str(a) for a in args]
    return entry
