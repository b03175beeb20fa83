"""Targets from an MCP client config (Claude Desktop, Claude Code, Cursor, VS Code; read by
scanner.provenance.client_config): each stdio entry's launch command (npx / uvx / pipx ...) names the registry package
it would run (scanner.provenance.launch). An exact version is kept; a range or a tag is scanned at the newest version.
A remote entry, a container image, a git or URL source, a launch that installs several packages or fetches from
another index (as `scan -- …` refuses it), or an entry that cannot be read is recorded as unsupported.
"""

from __future__ import annotations

from pathlib import Path

from sandbox.core.untrusted import escape_for_terminal
from scanner.batch.targets import BatchTarget
from scanner.errors import UsageError
from scanner.pipeline.doors import option_refusal
from scanner.pipeline.targets import parse_target
from scanner.provenance.client_config import ServerEntry, read_client_config
from scanner.provenance.launch import analyse_launch
from scanner.provenance.launch_runners import runner_call
from scanner.provenance.package_specs import PackageRef
from scanner.provenance.shell_words import Unparseable, command_segments


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
    refusal = _runner_refusal(entry.command, entry.args)
    if refusal is not None:
        return BatchTarget(shown, origin=where, unsupported=refusal)
    fetched = analyse_launch(entry.command, entry.args).packages
    if len(fetched) > 1:  # `uvx --with extra pkg`, `npx -p a -p b`, two programs: scanning one is not vetting them
        return BatchTarget(shown, origin=where, unsupported=f"the launch command installs {len(fetched)} packages; "
                           "the sandbox installs one: give each its own line in a targets file")
    packages = [ref for ref in fetched if ref.ecosystem in ("npm", "pypi") and ref.source == "registry"]
    if not packages:
        return BatchTarget(shown, origin=where, unsupported="the launch command runs no npm or PyPI registry "
                           "package (a container image, a git or URL source, or a local file)")
    target = _scan_target(packages[0])
    try:
        parse_target(target)
    except UsageError as exc:
        return BatchTarget(shown, origin=where, unsupported=f"not a valid target: {exc}")
    return BatchTarget(target, origin=where)


def _runner_refusal(command: str, args: list[str]) -> str | None:
    """Why a runner's own options keep its package from being the registry's (another index, more packages), as
    `scan -- …` refuses them; None when they do not (or the command is no runner's)."""
    try:
        segments = command_segments(command, args)
    except Unparseable:
        return None  # analyse_launch reads no package from it: unsupported there
    calls = [call for call in map(runner_call, segments) if call is not None]
    return next((why for why in map(option_refusal, calls) if why is not None), None)


def _scan_target(ref: PackageRef) -> str:
    if ref.ecosystem == "npm":
        return f"npm:{ref.name}@{ref.spec}" if ref.pinned and ref.spec else f"npm:{ref.name}"
    return f"pypi:{ref.name}{ref.spec}" if ref.pinned and ref.spec.startswith("==") else f"pypi:{ref.name}"
