"""This machine's per-user SQLite sidecars beside the engine's images (the images' last uses, what scans read out of
them): where they live, `$MCP_SANDBOX_STATE_DIR/<file>`, else `$XDG_CACHE_HOME/mcp-sandbox/<file>`, else
`~/.cache/mcp-sandbox/<file>`, and how one is opened (WAL, so a batch's scans write side by side)."""

from __future__ import annotations

import os
import sqlite3
import time
from collections.abc import Iterable
from pathlib import Path

WAL_ATTEMPTS = 5  # a brand-new file's switch to WAL fails at once, whatever the timeout, while another process makes it


def state_file(name: str) -> Path:
    """Where the sidecar `name` lives; raises OSError when no folder can be named (no variable set and no home
    folder: `HOME` unset and the user not in the password database), which the sidecars take as unusable."""
    state = os.environ.get("MCP_SANDBOX_STATE_DIR")
    if state:
        return Path(state) / name
    cache = os.environ.get("XDG_CACHE_HOME")
    if not cache:
        try:
            cache = str(Path.home() / ".cache")
        except RuntimeError as exc:  # pathlib's "Could not determine home directory"
            raise OSError(f"no folder for mcp-sandbox's state ({exc}): set MCP_SANDBOX_STATE_DIR") from None
    return Path(cache) / "mcp-sandbox" / name


def connect(path: Path, schema: Iterable[str]) -> sqlite3.Connection:
    """The sidecar at `path` (made, with its folder and `schema`'s tables, when missing), in WAL mode and autocommit;
    raises OSError or sqlite3.Error when it cannot be opened."""
    path.parent.mkdir(parents=True, exist_ok=True)
    connection = sqlite3.connect(path, timeout=10, isolation_level=None)
    try:
        _write_ahead(connection)
        for statement in schema:
            connection.execute(statement)
    except sqlite3.Error:
        connection.close()
        raise
    return connection


def _write_ahead(connection: sqlite3.Connection) -> None:
    """Switch the file to WAL, asked again for a moment while another process is making the same new file."""
    for attempt in range(WAL_ATTEMPTS):
        try:
            connection.execute("PRAGMA journal_mode=WAL")
            return
        except sqlite3.OperationalError:
            if attempt == WAL_ATTEMPTS - 1:
                raise
            time.sleep(0.02 * (attempt + 1))
