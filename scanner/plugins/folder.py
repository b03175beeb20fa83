"""Whether a folder is a plugin (plugin.json at its root), apart from the envelope check and its schemas: `scan` asks
it of every TARGET before its head start begins."""

from __future__ import annotations

from pathlib import Path

MANIFEST = "plugin.json"
MCP_FILE = "mcp.json"  # the Agent Plugins servers (scanner/plugins/mcp_config.py)


def is_plugin_folder(path: Path) -> bool:
    """A folder with plugin.json at its root (what `scan ./my-plugin` treats as a plugin). A TARGET that cannot name
    a path at all (too long: ENAMETOOLONG, which `Path.is_dir` raises) is no plugin: the target's own parsing says
    what is wrong with it."""
    try:
        return path.is_dir() and (path / MANIFEST).is_file()
    except OSError:
        return False
