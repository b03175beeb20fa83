"""What a plugin folder holds that a client loads but the envelope check and `scan PLUGIN` do not vet: the parts
other clients read from the same folder (Claude Code: `.claude-plugin/plugin.json`, `.mcp.json`, `hooks/hooks.json`,
`.lsp.json`, `monitors/monitors.json`, `bin/`, `commands/`, `agents/`; Copilot CLI and VS Code: the `hooks`,
`mcpServers` and `lspServers` fields of plugin.json itself, `hooks.json`, `.mcp.json`) and the text of the skills.
Listed, never silently passed: a part that starts a process or runs a shell command (`runs`) makes `scan PLUGIN`
incomplete, since the scan of the Agent Plugins servers is no evidence about it."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any, Protocol

from scanner.plugins.folder import MANIFEST
from scanner.plugins.jsontext import read_json
from scanner.plugins.model import EnvelopeResult, Unvetted

CLAUDE_MANIFEST = ".claude-plugin/plugin.json"
RUNS = (  # a client starts these on its own
    (".mcp.json", "MCP servers of Claude Code and Copilot CLI (processes a client starts; this scan runs only "
                  "mcp.json's)"),
    ("hooks/hooks.json", "hooks (shell commands a client runs on events, unprompted)"),
    ("hooks.json", "Copilot CLI's hooks (shell commands a client runs on events, unprompted)"),
    (".lsp.json", "LSP servers (processes a client starts)"),
    ("monitors/monitors.json", "Claude Code's background monitors (commands a client runs)"),
)
AGENT_USES = (  # read or run when the agent chooses to (a bin/ at the root is also npm's usual layout)
    ("bin", "Claude Code's executables, put on the agent's PATH (they can stand in for the commands it runs)"),
    ("commands", "slash commands (prompts: not read)"),
    ("agents", "subagents (prompts: not read)"),
)
LAUNCHING_FIELDS = ("hooks", "mcpServers", "lspServers")  # declared inline or by path
EMPTY = (None, "", [], {})  # a field that declares nothing


class PluginFiles(Protocol):
    """The files of a plugin, wherever they are: a folder on this machine (HostFolder), or those read out of an
    installed package (scanner/plugins/package_parts.py). `name` is /-separated, relative to the plugin's root."""

    def exists(self, name: str) -> bool: ...

    def is_dir(self, name: str) -> bool: ...

    def json(self, name: str) -> Any:
        """The parsed file; ValueError (one line, after the file's name) when it cannot be read or is no JSON."""


class HostFolder:
    """A plugin folder on this machine, read as the envelope reads it (never through a link out of it)."""

    def __init__(self, root: Path) -> None:
        self.root = root

    def exists(self, name: str) -> bool:
        return os.path.lexists(self.root / name)

    def is_dir(self, name: str) -> bool:
        try:
            return (self.root / name).is_dir()
        except OSError:  # a link to a place this user may not look into (EACCES): no folder it can read
            return False

    def json(self, name: str) -> Any:
        return read_json(self.root / name, self.root)[0]


def check_unvetted(result: EnvelopeResult, root: Path) -> None:
    result.unvetted.extend(unvetted_parts(HostFolder(root), skills=result.skills))


def unvetted_parts(files: PluginFiles, skills: int = 0, *, envelope: bool = True) -> list[Unvetted]:
    """What a client loads from the plugin that nothing here vets, in a fixed order (the manifests first).
    `envelope`: a plugin folder's envelope reports an unreadable plugin.json (FATAL), so it is not listed here; a
    package scanned as a package has no envelope, and a client may read it all the same."""
    found = [*_manifest(files, MANIFEST, "plugin.json, whose fields Copilot CLI and VS Code also read",
                        said_elsewhere=envelope),
             *_manifest(files, CLAUDE_MANIFEST, "Claude Code's plugin manifest")]
    for name, what, runs in [(n, w, True) for n, w in RUNS] + [(n, w, False) for n, w in AGENT_USES]:
        if files.exists(name):
            found.append(Unvetted(f"{name}/" if files.is_dir(name) else name, what, runs=runs))
    if skills:
        found.append(Unvetted("skills/", "the skills' instructions (SKILL.md) and the scripts and files beside "
                              "them: not read", runs=False))
    return found


def _manifest(files: PluginFiles, name: str, owner: str, *, said_elsewhere: bool = False) -> list[Unvetted]:
    """A manifest is a part that runs when it declares hooks or servers; one that cannot be read may (unless that is
    `said_elsewhere`: plugin.json unread is a plugin folder's envelope's FATAL finding already)."""
    if not files.exists(name):
        return []
    try:
        manifest = files.json(name)
    except ValueError as exc:
        if said_elsewhere:
            return []
        return [Unvetted(name, f"{owner}, which {exc}: it may declare hooks and servers", runs=True)]
    declared = [f for f in LAUNCHING_FIELDS if isinstance(manifest, dict) and manifest.get(f) not in EMPTY]
    if declared:
        return [Unvetted(name, f"{owner}, declaring {', '.join(declared)} (hooks run shell commands, servers are "
                         "processes)", runs=True)]
    if name != MANIFEST:
        return [Unvetted(name, f"{owner} (metadata and prompt paths only)", runs=False)]
    return []
