"""Where this machine's per-user sidecars beside the engine's images live (the images' last uses, what scans read out
of them): `$MCP_SANDBOX_STATE_DIR/<file>`, else `$XDG_CACHE_HOME/mcp-sandbox/<file>`, else
`~/.cache/mcp-sandbox/<file>`."""

from __future__ import annotations

import os
from pathlib import Path


def state_file(name: str) -> Path:
    state = os.environ.get("MCP_SANDBOX_STATE_DIR")
    if state:
        return Path(state) / name
    cache = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    return Path(cache) / "mcp-sandbox" / name
