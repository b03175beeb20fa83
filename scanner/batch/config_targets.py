"""Targets from an MCP client config (Claude Desktop, Claude Code, Cursor, VS Code; read by
scanner.provenance.client_config): each stdio entry's launch command (npx / uvx / pipx ...) names the registry package
it would run (scanner.provenance.launch). An exact version is kept; a range or a tag is scanned at the newest version.
A remote entry, a container image, a git or URL source, or an entry that cannot be read is recorded as unsupported.
"""

from __future__ import annotations

from pathlib import Path

from sandbox.core.untrusted import escape_for_terminal
from scanner.batch.targets import BatchTarget
from scanner.errors import UsageError
from scanner.pipeline.targets import parse_target
from scanner.provenance.client_config import ServerEntry, read_client_config
from scanner.provenance.launch import analyse_launch
from scanner.provenance.package_specs import PackageRef


def config_targets(path: Path) -> list[BatchTarget]:
    config = read_client_config(path)
    return [_entry_target(entry) for entry in config.servers]


def _entry_target(entry: ServerEntry) -> BatchTarget:
    name = escape_for_terminal(entry.name, 200)
    where = f"{name} ({entry.scope})" if entry.scope else name
    shown = f"config:{name}"
    if entry.problem or entry.transport != "stdio" or entry.command is None:
        why = entry.problem or ("a remote server (no package to install)" if entry.transport == "remote"
                                else "no launch command")
        return BatchTarget(shown, origin=where, unsupported=why)
    packages = [ref for ref in analyse_launch(entry.command, entry.args).packages
                if ref.ecosystem in ("npm", "pypi") and ref.source == "registry"]
    if not packages:
        return BatchTarget(shown, origin=where, unsupported="the launch command runs no npm or PyPI registry "
                           "package (a container image, a git or URL source, or a local file)")
    target = _scan_target(packages[0])
    try:
        parse_target(target)
    except UsageError as exc:
        return BatchTarget(shown, origin=where, unsupported=f"not a valid target: {exc}")
    return BatchTarget(target, origin=where)


def _scan_target(ref: PackageRef) -> str:
    if ref.ecosystem == "npm":
        return f"npm:{ref.name}@{ref.spec}" if ref.pinned and ref.spec else f"npm:{ref.name}"
    return f"pypi:{ref.name}{ref.spec}" if ref.pinned and ref.spec.startswith("==") else f"pypi:{ref.name}"
