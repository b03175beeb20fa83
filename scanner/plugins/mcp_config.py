"""mcp.json: optional (absent is valid and silent, §6.2). The root against the 1.0.0 schema, then each server entry
on its own against its closed variant, plus what the schema cannot say: single-token commands, containment of
`./` commands and cwd (symlinks followed), reserved env names, the URL rules, header names, and the deprecated
SSE transport."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from sandbox.core.untrusted import escape_for_terminal
from scanner.plugins.containment import cwd_problem, inside
from scanner.plugins.folder import MCP_FILE
from scanner.plugins.jsontext import line_of, read_json, type_name
from scanner.plugins.model import DeclaredServer, EnvelopeResult
from scanner.plugins.remote import header_problems, url_problem
from scanner.plugins.schema_check import VARIANTS, mcp_root_errors, server_errors


def check_mcp(result: EnvelopeResult, root: Path) -> None:
    path = root / MCP_FILE
    if not path.exists() and not path.is_symlink():
        return
    result.has_mcp_json = True
    try:
        document, text = read_json(path, root)
    except ValueError as exc:
        result.add("PLUGIN_MCP_INVALID", MCP_FILE, 1, f"mcp.json {exc}")
        return
    for error in mcp_root_errors(document):
        line = line_of(text, error.path) if error.path else 1
        result.add("PLUGIN_MCP_INVALID", MCP_FILE, line, f"{error.field or 'mcp.json'}: {error.message}")
    servers = document.get("mcpServers") if isinstance(document, dict) else None
    if isinstance(servers, dict):
        for name, entry in servers.items():
            _check_server(result, root, text, str(name), entry)


def _check_server(result: EnvelopeResult, root: Path, text: str, name: str, entry: Any) -> None:
    shown = escape_for_terminal(name, 80)
    where = ["mcpServers", name]

    def add(rule: str, keys: list[str], message: str, section: str = "") -> None:
        result.add(rule, MCP_FILE, line_of(text, where + keys), f"{shown}: {message}", section, name)

    if not isinstance(entry, dict):
        result.servers.append(DeclaredServer(name, ""))
        add("PLUGIN_MCP_INVALID", [], f"must be a server configuration object, not {type_name(entry)}")
        return
    transport = entry.get("type")
    if transport not in VARIANTS:
        result.servers.append(DeclaredServer(name, ""))
        got = "missing" if transport is None else f"not {escape_for_terminal(str(transport), 40)!r}"
        add("PLUGIN_MCP_INVALID", ["type"], f"type must be \"stdio\", \"streamable-http\" or \"sse\" ({got})")
        return
    for error in server_errors(transport, entry):
        if error.keyword == "pattern" and error.path == ["cwd"]:
            add("PLUGIN_CWD_ESCAPE", ["cwd"], "cwd does not start with ./, ${PLUGIN_ROOT} or ${PLUGIN_DATA}")
        elif error.keyword == "propertyNames":
            add("PLUGIN_ENV_RESERVED", ["env"], "env names a reserved variable (PLUGIN_ROOT or PLUGIN_DATA): the "
                "entry makes this server configuration invalid")
        else:
            add("PLUGIN_MCP_INVALID", error.path, f"{error.field + ': ' if error.field else ''}{error.message}")
    if transport == "stdio":
        result.servers.append(_declared(name, entry))
        _check_command(root, entry.get("command"), add)
        cwd = entry.get("cwd")
        if isinstance(cwd, str) and cwd.startswith(("./", "${PLUGIN_ROOT}", "${PLUGIN_DATA}")):
            problem = cwd_problem(root, cwd)
            if problem:
                add("PLUGIN_CWD_ESCAPE", ["cwd"], f"cwd {escape_for_terminal(cwd, 200)!r} {problem}", "7.2.2")
        return
    url, headers = entry.get("url"), entry.get("headers")
    result.servers.append(DeclaredServer(name, transport, url=url if isinstance(url, str) else None,
                                         header_names=sorted(headers) if isinstance(headers, dict) else []))
    _check_remote(transport, entry, add)


def _declared(name: str, entry: dict[str, Any]) -> DeclaredServer:
    command = entry.get("command") if isinstance(entry.get("command"), str) else None
    args = entry.get("args")
    env = entry.get("env")
    cwd = entry.get("cwd")
    return DeclaredServer(name, "stdio", command,
                          [a for a in args if isinstance(a, str)] if isinstance(args, list) else [],
                          sorted(env) if isinstance(env, dict) else [], cwd if isinstance(cwd, str) else None)


def _check_command(root: Path, command: Any, add: Any) -> None:
    if not isinstance(command, str) or not command:
        return  # the schema said so already
    shown = escape_for_terminal(command, 200)
    if command.startswith("./"):
        target = root / command
        if not inside(root, target):
            add("PLUGIN_MCP_INVALID", ["command"], f"command {shown!r} resolves outside the plugin folder (by .. or a "
                "symlink): a containment failure makes the server entry invalid", "7.2.2")
        elif any(ch.isspace() for ch in command) and not target.is_file():
            add("PLUGIN_CMD_NOT_SINGLE_TOKEN", ["command"], f"command {shown!r} has whitespace and names no bundled "
                "file: clients do not shell-split it; give the arguments in args")
    elif any(ch.isspace() for ch in command):
        add("PLUGIN_CMD_NOT_SINGLE_TOKEN", ["command"], f"command {shown!r} is {len(command.split())} words: clients "
            "do not shell-split it, so it names an executable of that whole name; give the arguments in args")
    elif "/" in command or "\\" in command:
        add("PLUGIN_CMD_NOT_SINGLE_TOKEN", ["command"], f"command {shown!r} is neither a bare executable name nor a "
            "plugin-relative path beginning with ./")


def _check_remote(transport: str, entry: dict[str, Any], add: Any) -> None:
    url = entry.get("url")
    if isinstance(url, str) and url:
        problem = url_problem(url)
        if problem:
            add("PLUGIN_REMOTE_INSECURE_URL", ["url"], f"url {problem}")
    headers = entry.get("headers")
    if isinstance(headers, dict):
        for problem in header_problems(headers, getattr(headers, "duplicates", [])):
            add("PLUGIN_MCP_INVALID", ["headers"], problem)
    if transport == "sse":
        add("PLUGIN_SSE_TRANSPORT", ["type"], "type \"sse\" is the HTTP+SSE transport, deprecated by MCP 2026-07-28 "
            "(SEP-2596): serve Streamable HTTP")
