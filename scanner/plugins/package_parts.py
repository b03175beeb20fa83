"""A package `scan` installed (npm:PKG, an archive, a package folder) that is also an agent plugin: a Claude Code
plugin (`.claude-plugin/plugin.json`, or `hooks/hooks.json` without one) or an Agent Plugins package (`plugin.json`).
A client that installs it as a plugin runs its hooks (shell commands, on events, unprompted) and starts the servers its
manifests, `.mcp.json` and `mcp.json` declare, outside any sandbox; the package's scan runs only the package's own
server, so those parts are listed as not vetted and make the scan incomplete (as `scan PLUGIN` does with what it does
not vet: scanner/plugins/unvetted.py, whose reading this reuses). A package with none of these files is no plugin,
and a plugin manifest that declares neither hooks nor servers runs nothing: nothing is said of either.

The files are read from the folder (a folder target) or out of the installed package (scanner/pipeline/source_scan.py
reads PLUGIN_FILES beside its source files): untrusted bytes, parsed as JSON only (at most jsontext.MAX_JSON_BYTES),
never run, no path in them followed."""

from __future__ import annotations

from collections.abc import Collection, Mapping
from pathlib import Path
from typing import Any

from scanner.plugins.folder import MANIFEST, MCP_FILE
from scanner.plugins.jsontext import parse_json
from scanner.plugins.model import Unvetted
from scanner.plugins.unvetted import CLAUDE_MANIFEST, RUNS, HostFolder, PluginFiles, unvetted_parts

HOOKS = "hooks/hooks.json"
MARKERS = (MANIFEST, CLAUDE_MANIFEST, HOOKS)  # a package holding one of these is a plugin too
PLUGIN_FILES = (MANIFEST, CLAUDE_MANIFEST, MCP_FILE, *(name for name, _ in RUNS))  # read out of an installed package
AGENT_SERVERS = "Agent Plugins' MCP servers (processes a client starts; `scan` of the plugin's folder runs them)"


class PackedFiles:
    """The plugin files read out of an installed package (only regular files: `is_dir` is never true), by their path
    in the package; `too_big`: those over the read's per-file bound, present but not read."""

    def __init__(self, files: Mapping[str, bytes], too_big: Collection[str] = ()) -> None:
        self.files, self.too_big = files, too_big

    def exists(self, name: str) -> bool:
        return name in self.files or name in self.too_big

    def is_dir(self, name: str) -> bool:
        return False

    def json(self, name: str) -> Any:
        if name not in self.files:
            raise ValueError("is over the read's size bound: not read")
        return parse_json(self.files[name])[0]


def package_parts(files: PluginFiles) -> list[Unvetted]:
    """What a client that installs the package as a plugin runs and the package's scan does not vet; [] for a
    package that is no plugin."""
    if not any(files.exists(marker) for marker in MARKERS):
        return []
    parts = [part for part in unvetted_parts(files, envelope=False) if part.runs]
    if files.exists(MANIFEST) and files.exists(MCP_FILE):
        parts.append(Unvetted(MCP_FILE, AGENT_SERVERS, runs=True))
    return parts


def folder_parts(folder: Path) -> list[Unvetted]:
    """package_parts of a package folder on this machine (never read through a link out of it)."""
    return package_parts(HostFolder(folder))


def not_vetted_reason(parts: list[Unvetted]) -> str | None:
    """Why the package's scan is incomplete (the report's skipped `plugin` stage), or None when nothing runs."""
    if not parts:
        return None
    return (f"not vetted, run by a client that installs the package as an agent plugin: "
            f"{', '.join(part.file for part in parts)} (hooks are shell commands and servers processes, run outside "
            "any sandbox; this scan ran only the package's own server)")
