"""What a plugin folder holds that a client loads but the envelope check and `scan PLUGIN` do not vet: another
client's plugin layout in the same folder (Claude Code's: `.claude-plugin/plugin.json`, `.mcp.json`,
`hooks/hooks.json`, `.lsp.json`, `commands/`, `agents/`) and the text of the skills. Listed, never silently passed:
a part that starts a process or runs a shell command (`runs`) makes `scan PLUGIN` incomplete, since the scan of the
Agent Plugins servers is no evidence about it."""

from __future__ import annotations

import os
from pathlib import Path

from scanner.plugins.jsontext import read_json
from scanner.plugins.model import EnvelopeResult, Unvetted

CLAUDE_MANIFEST = ".claude-plugin/plugin.json"
RUNS = (  # a client starts these on its own: shell commands on events, MCP and LSP server processes
    (".mcp.json", "Claude Code's MCP servers (processes a client starts; this scan runs only mcp.json's)"),
    ("hooks/hooks.json", "Claude Code's hooks (shell commands a client runs on events, unprompted)"),
    (".lsp.json", "Claude Code's LSP servers (processes a client starts)"),
)
PROMPTS = (
    ("commands", "Claude Code's slash commands (prompts: not read)"),
    ("agents", "Claude Code's subagents (prompts: not read)"),
)
LAUNCHING_FIELDS = ("hooks", "mcpServers", "lspServers")  # what Claude Code's manifest can declare inline or by path


def check_unvetted(result: EnvelopeResult, root: Path) -> None:
    for name, what in RUNS:
        if os.path.lexists(root / name):
            result.unvetted.append(Unvetted(name, what, runs=True))
    _claude_manifest(result, root)
    for name, what in PROMPTS:
        if os.path.lexists(root / name):
            result.unvetted.append(Unvetted(f"{name}/", what, runs=False))
    if result.skills:
        result.unvetted.append(Unvetted("skills/", "the skills' instructions (SKILL.md) and the scripts and files "
                                        "beside them: not read", runs=False))


def _claude_manifest(result: EnvelopeResult, root: Path) -> None:
    """Claude Code's manifest: a part that runs when it declares hooks or servers (or cannot be read: it may)."""
    path = root / CLAUDE_MANIFEST
    if not os.path.lexists(path):
        return
    try:
        manifest, _ = read_json(path, root)
    except ValueError as exc:
        result.unvetted.append(Unvetted(CLAUDE_MANIFEST, f"Claude Code's plugin manifest, which {exc}: it may declare "
                                        "hooks and servers", runs=True))
        return
    declared = [f for f in LAUNCHING_FIELDS if isinstance(manifest, dict) and f in manifest]
    if declared:
        result.unvetted.append(Unvetted(CLAUDE_MANIFEST, f"Claude Code's plugin manifest, declaring "
                                        f"{', '.join(declared)} (hooks run shell commands, servers are processes)",
                                        runs=True))
    else:
        result.unvetted.append(Unvetted(CLAUDE_MANIFEST, "Claude Code's plugin manifest (metadata and prompt paths "
                                        "only)", runs=False))
