"""The door a client config opens (`scan --config-file FILE [--server NAME…]`): each server entry mapped as a
launch command is (scanner.pipeline.doors), or the one line saying why it is not scanned (a remote entry, an
unreadable one, a command that names no package). Pure: nothing here reads the registry or starts anything."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

from sandbox.core.untrusted import escape_for_terminal
from scanner.errors import UsageError
from scanner.pipeline.doors import LaunchMapping, NotMapped, map_launch
from scanner.provenance.client_config import ClientConfig, ServerEntry

REMOTE_NOT_SCANNED = "remote: not scanned yet (see issue 14 §5)"
SANDBOX_SETS = ("PATH", "HOME")  # the sandbox's own variables: a config cannot change them


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
    passed = {k: v for k, v in entry.env.items() if k not in SANDBOX_SETS} if pass_env else {}
    planned.env = passed
    planned.env_not_passed = [name for name in entry.env_names if name not in passed]
    if entry.problem is not None:
        planned.not_scanned = f"unreadable entry: {entry.problem}"
    elif entry.transport == "remote":
        planned.not_scanned = REMOTE_NOT_SCANNED
    elif entry.command is None:
        planned.not_scanned = "no command to launch"
    else:
        try:
            planned.mapping = map_launch([entry.command, *entry.args], base)
        except NotMapped as exc:
            planned.not_scanned = str(exc)
    return planned


def _base(config: ClientConfig, entry: ServerEntry) -> Path:
    if entry.scope:
        project = Path(entry.scope).expanduser()
        if project.is_dir():
            return project
    return Path(config.path).expanduser().resolve().parent
