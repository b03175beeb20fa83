"""`check_plugin(DIR)`: the Agent Plugins 1.0.0 envelope of a plugin folder, offline (plugin.json, mcp.json,
skills/), with mcp-vet 0.15's rule ids and tiers. The contents of `extensions` are never validated (§8.1)."""

from __future__ import annotations

from pathlib import Path

from scanner.errors import UsageError
from scanner.plugins.manifest import check_manifest
from scanner.plugins.mcp_config import check_mcp
from scanner.plugins.model import EnvelopeResult
from scanner.plugins.skills import check_skills
from scanner.plugins.unvetted import check_unvetted


def check_plugin(folder: Path) -> EnvelopeResult:
    root = folder.expanduser()
    if not root.is_dir():
        raise UsageError(f"{folder} is not a folder; give the plugin's root folder (the one holding plugin.json)")
    root = root.resolve()
    result = EnvelopeResult(root)
    check_manifest(result, root)
    check_mcp(result, root)
    check_skills(result, root)
    check_unvetted(result, root)
    return result
