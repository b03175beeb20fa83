"""What a plugin folder holds that a client loads but the envelope check and `scan PLUGIN` do not vet: the parts
other clients read from the same folder (Claude Code: `.claude-plugin/plugin.json`, `.mcp.json`, `hooks/hooks.json`,
`.lsp.json`, `monitors/monitors.json`, `bin/`, `commands/`, `agents/`; Copilot CLI and VS Code: the `hooks`,
`mcpServers` and `lspServers` fields of plugin.json itself, `hooks.json`, `.mcp.json`) and the text of the skills.
Listed, never silently passed: a part that starts a process or runs a shell command (`runs`) makes `scan PLUGIN`
incomplete, since the scan of the Agent Plugins servers is no evidence about it."""

from __future__ import annotations

import os
from pathlib import Path

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


def check_unvetted(result: EnvelopeResult, root: Path) -> None:
    _manifest(result, root, MANIFEST, "plugin.json, whose fields Copilot CLI and VS Code also read")
    _manifest(result, root, CLAUDE_MANIFEST, "Claude Code's plugin manifest")
    for name, what, runs in [(n, w, True) for n, w in RUNS] + [(n, w, False) for n, w in AGENT_USES]:
        if os.path.lexists(root / name):
            shown = f"{name}/" if (root / name).is_dir() else name
            result.unvetted.append(Unvetted(shown, what, runs=runs))
    if result.skills:
        result.unvetted.append(Unvetted("skills/", "the skills' instructions (SKILL.md) and the scripts and files "
                                        "beside them: not read", runs=False))


def _manifest(result: EnvelopeResult, root: Path, name: str, owner: str) -> None:
    """A manifest is a part that runs when it declares hooks or servers; another client's that cannot be read may
    (plugin.json unread is the envelope's FATAL finding already)."""
    path = root / name
    if not os.path.lexists(path):
        return
    try:
        manifest, _ = read_json(path, root)
    except ValueError as exc:
        if name != MANIFEST:
            result.unvetted.append(Unvetted(name, f"{owner}, which {exc}: it may declare hooks and servers",
                                            runs=True))
        return
    declared = [f for f in LAUNCHING_FIELDS if isinstance(manifest, dict) and manifest.get(f) not in EMPTY]
    if declared:
        result.unvetted.append(Unvetted(name, f"{owner}, declaring {', '.join(declared)} (hooks run shell "
                                        "commands, servers are processes)", runs=True))
    elif name != MANIFEST:
        result.unvetted.append(Unvetted(name, f"{owner} (metadata and prompt paths only)", runs=False))
