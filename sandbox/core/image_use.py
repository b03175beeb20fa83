"""When each installed-server image was last used: a small SQLite sidecar beside the engine's images.

Image labels are fixed when the image is committed, so they can say when an image was made (io.mcp-sandbox.created)
but never when a later scan reused it. The cache's LRU eviction (sandbox/core/image_cache.py) needs the latter, so
each install that commits an image and each scan that reuses a cached one records `image id -> time` here; an image
with no record (made before this existed, or by a scanner on another machine sharing the engine) counts as last
used when it was made. The file is per user of this machine (`image-use.sqlite` in sandbox/core/state_dir.py's
folder). SQLite (WAL) makes the concurrent writes of a batch's
scans safe; a record it cannot write is skipped (the image then looks older than it is, never newer).
"""

from __future__ import annotations

import sqlite3
import time
from pathlib import Path

from sandbox.core.state_dir import connect, state_file

FILE_NAME = "image-use.sqlite"
SCHEMA = "CREATE TABLE IF NOT EXISTS image_use (image_id TEXT PRIMARY KEY, last_used REAL NOT NULL)"


def default_path() -> Path:
    return state_file(FILE_NAME)


def _connect(path: Path) -> sqlite3.Connection:
    return connect(path, [SCHEMA])


def record_use(image_id: str, now: float | None = None, path: Path | None = None) -> bool:
    """Record that `image_id` was used now; False when the sidecar could not be written (the use is not recorded)."""
    try:
        connection = _connect(path or default_path())
    except (OSError, sqlite3.Error):
        return False
    try:
        connection.execute("INSERT INTO image_use VALUES (?, ?) ON CONFLICT (image_id) DO UPDATE SET last_used = "
                           "MAX(last_used, excluded.last_used)", (image_id, time.time() if now is None else now))
        return True
    except sqlite3.Error:
        return False
    finally:
        connection.close()


def last_uses(path: Path | None = None) -> dict[str, float]:
    """Every recorded image id and its last use ({} when there is no sidecar yet, or none can be named)."""
    try:
        path = path or default_path()
        if not path.is_file():
            return {}
        connection = _connect(path)
    except (OSError, sqlite3.Error):
        return {}
    try:
        return {str(i): float(t) for i, t in connection.execute("SELECT image_id, last_used FROM image_use")}
    finally:
        connection.close()


def forget(image_ids: list[str], path: Path | None = None) -> None:
    """Drop the records of removed images."""
    try:
        path = path or default_path()
        if not image_ids or not path.is_file():
            return
        connection = _connect(path)
    except (OSError, sqlite3.Error):
        return
    try:
        connection.executemany("DELETE FROM image_use WHERE image_id = ?", [(i,) for i in image_ids])
    finally:
        connection.close()
