"""The door a client config opens (`scan --config-file FILE [--server NAME…]`): each local server entry mapped as a
launch command is (scanner.pipeline.doors), each remote one to the `--url` target (scanner.pipeline.remote_target:
its headers passed only with --pass-config-env, as secrets), or the one line saying why it is not scanned (an SSE
entry, an unreadable one, a command that names no package). What a client would expand and this cannot (`envFile`,
`${input:…}` and other `${…}` variables) is said per entry, never dropped silently. Pure: nothing here reads the
registry or starts anything."""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from pathlib import Path

from sandbox.core.untrusted import escape_for_terminal
from scanner.errors import UsageError
from scanner.pipeline.doors import LaunchMapping, NotMapped, map_launch
from scanner.pipeline.remote_target import RemoteTarget, config_remote
from scanner.provenance.client_config import ClientConfig, ServerEntry

SSE_NOT_SCANNED = "SSE transport (the deprecated HTTP+SSE transport; only Streamable HTTP is scanned)"
SANDBOX_SETS = ("PATH", "HOME")  # the sandbox's own variables: a config cannot change them
VARIABLE = re.compile(r"\$\{[^}]{0,200}\}")  # a client's own: ${input:id}, ${env:NAME}, ${workspaceFolder}, ${NAME}
WORKSPACE_FOLDER = "${workspaceFolder}"


@dataclass
class PlannedServer:
    """One server entry of the config: what it maps to (or why it is not scanned), and its environment."""

    name: str
    scope: str | None = None
    disabled: bool = False
    mapping: LaunchMapping | None = None
    not_scanned: str | None = None  # why, one line, when mapping is None
    env: dict[str, str] = field(default_factory=dict, repr=False)  # the values passed (only with --pass-config-env)
    env_not_passed: list[str] = field(default_factory=list)  # the names of the config's variables not passed
    transport: str = "stdio"  # stdio, streamable-http or sse
    remote: RemoteTarget | None = field(default=None, repr=False)  # a remote entry scanned over Streamable HTTP
    headers_not_passed: list[str] = field(default_factory=list)  # a remote entry's header names not sent
    notes: list[str] = field(default_factory=list)  # what the config says and the scan does not apply or read

    @property
    def label(self) -> str:
        """The entry's name as the table shows it (with its project, for a Claude Code project entry)."""
        name = escape_for_terminal(self.name, 120)
        return f"{name} [{escape_for_terminal(self.scope, 120)}]" if self.scope else name


def select(config: ClientConfig, names: list[str]) -> list[ServerEntry]:
    """The entries named (every entry when none is); a name the config does not have is a UsageError."""
    if not names:
        return list(config.servers)
    have = {entry.name for entry in config.servers}
    missing = [name for name in names if name not in have]
    if missing:
        listed = ", ".join(escape_for_terminal(n, 80) for n in sorted(have)[:20]) or "none"
        raise UsageError(f"--server {escape_for_terminal(missing[0], 80)}: {config.path} has no such server; it has: "
                         f"{listed}")
    return [entry for entry in config.servers if entry.name in names]


def plan_servers(config: ClientConfig, names: list[str], pass_env: bool) -> list[PlannedServer]:
    """Every selected entry mapped to its target. Relative paths in a command are read from the entry's project
    folder (a Claude Code project entry) when it exists, else from the config file's folder."""
    return [plan_entry(entry, _base(config, entry), pass_env) for entry in select(config, names)]


def plan_entry(entry: ServerEntry, base: Path, pass_env: bool) -> PlannedServer:
    planned = PlannedServer(name=entry.name, scope=entry.scope, disabled=entry.disabled)
    planned.env = _passed(entry.env, pass_env, "env", planned.notes, skip=SANDBOX_SETS)
    planned.env_not_passed = [name for name in entry.env_names if name not in planned.env]
    if entry.env_file:
        planned.notes.append("envFile not read: its variables are not passed (give them with --env NAME=VALUE)")
    if entry.problem is not None:
        planned.not_scanned = f"unreadable entry: {entry.problem}"
    elif entry.transport == "remote":
        _plan_remote(entry, pass_env, planned)
    elif entry.command is None:
        planned.not_scanned = "no command to launch"
    else:
        _plan_local(entry, base, planned)
    return planned


def _plan_local(entry: ServerEntry, base: Path, planned: PlannedServer) -> None:
    words = [entry.command or "", *entry.args]
    for word in dict.fromkeys(VARIABLE.findall(" ".join(entry.args))):
        planned.notes.append(f"not read: {escape_for_terminal(word, 120)} in args (a client variable): passed "
                             "as written")
    cwd = _cwd(entry.cwd, base, planned.notes)
    try:
        planned.mapping = map_launch(words, cwd or base)
    except NotMapped as exc:
        planned.not_scanned = str(exc)
        return
    if cwd is not None:
        planned.notes.append(f"cwd {escape_for_terminal(str(cwd), 200)} read for the command's relative paths; in the "
                             "sandbox the server runs in its seeded /workspace")


def _cwd(cwd: str | None, base: Path, notes: list[str]) -> Path | None:
    """The entry's working directory on this machine, when it names one that exists (${workspaceFolder}: the folder
    a .vscode/mcp.json sits in belongs to); else None, and a note saying it was not applied."""
    if cwd is None:
        return None
    text = cwd
    if text.startswith(WORKSPACE_FOLDER) and base.name == ".vscode":
        text = str(base.parent) + text[len(WORKSPACE_FOLDER):]
    folder = None if VARIABLE.search(text) else (base / Path(text).expanduser())
    if folder is None or not folder.is_dir():
        why = "it names a client variable" if folder is None else "no such folder here"
        notes.append(f"cwd {escape_for_terminal(cwd, 200)} not applied ({why}): relative paths are read from "
                     f"{escape_for_terminal(str(base), 200)}")
        return None
    return folder.resolve()


def _plan_remote(entry: ServerEntry, pass_env: bool, planned: PlannedServer) -> None:
    """A remote entry: the --url target (Streamable HTTP), its headers passed only when asked; SSE is said."""
    path = (entry.url or "").split("?")[0].rstrip("/")
    planned.transport = "streamable-http"
    if (entry.remote_type or "").lower() == "sse" or (entry.remote_type is None and path.endswith("/sse")):
        planned.transport, planned.not_scanned = "sse", SSE_NOT_SCANNED
        return
    headers = _passed(entry.headers, pass_env, "header", planned.notes)
    planned.headers_not_passed = [name for name in entry.header_names if name not in headers]
    try:
        planned.remote = config_remote(entry.url or "", headers)
    except UsageError as exc:
        planned.not_scanned = f"remote entry not scanned: {exc}"


def _passed(values: dict[str, str], pass_env: bool, what: str, notes: list[str],
            skip: tuple[str, ...] = ()) -> dict[str, str]:
    """The values a --pass-config-env run passes: not the sandbox's own, not one naming a client variable."""
    if not pass_env:
        return {}
    passed = {}
    for name, value in values.items():
        if name in skip:
            continue
        if what == "env" and (why := _unpassable_env(name, value)) is not None:
            notes.append(f"env {escape_for_terminal(name, 80)} not passed: {why}")
            continue
        if VARIABLE.search(value):
            notes.append(f"{what} {escape_for_terminal(name, 80)} not passed: its value names a client variable "
                         f"({escape_for_terminal(VARIABLE.findall(value)[0], 120)}), which is not read")
            continue
        passed[name] = value
    return passed


def _unpassable_env(name: str, value: str) -> str | None:
    """Why a config variable cannot be set as written (None when it can): the engine splits `NAME=VALUE` at the
    first `=`, so `HOME=/x` would set HOME (the sandbox's own), and no process's environment holds a NUL."""
    if not name or "=" in name or "\x00" in name:
        return "it is no environment variable name (empty, or with = or NUL in it)"
    if "\x00" in value:
        return "its value holds a NUL character, which no environment can carry"
    return None


def _base(config: ClientConfig, entry: ServerEntry) -> Path:
    if entry.scope:
        project = Path(entry.scope).expanduser()
        if project.is_dir():
            return project
    return Path(config.path).expanduser().resolve().parent
