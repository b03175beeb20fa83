"""What scans read out of an installed image, kept so that the next scan of the same image does not read it again.

A read through the engine's archive API (sandbox/core/image_files.py) costs the engine about 57 ms of CPU (dockerd
runs a copy of itself to tar the path inside the image's root), and a warm scan of a PyPI server made four of them,
plus a container to read through: about a quarter of a core-second of every scan of an image that never changes. So
the reads are kept here, beside the engine's images, in a per-user SQLite file (`image-reads.sqlite` in
sandbox/core/state_dir.py's folder, opened as it opens one).

An entry is keyed by the image's id, which is the digest of its content (another image, a reinstall included, never
matches), and by the caller's key, which names what was read and how (folders, filters, bounds), so a read made
differently is another entry. It holds named blobs and a JSON object of what else the read said (files over a bound,
a cut). Each entry records its blobs' count and total size, and one that does not add up is as if absent. An entry
over MAX_ENTRY_BYTES is not kept; the file is held under MAX_STORE_BYTES by dropping the oldest entries; the install
cache's eviction drops the entries of the images it removes and of those gone since (`prune`). Anything this file
cannot do (unwritable, locked, corrupt) is as if the entry were absent: the caller reads the image, as without it.
"""

from __future__ import annotations

import json
import sqlite3
import time
from collections.abc import Callable, Iterable, Mapping
from contextlib import closing
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from sandbox.core.state_dir import connect, state_file

FILE_NAME = "image-reads.sqlite"
MAX_ENTRY_BYTES = 16 * 1024 * 1024
MAX_STORE_BYTES = 256 * 1024 * 1024
SCHEMA = (
    "CREATE TABLE IF NOT EXISTS reads (image_id TEXT NOT NULL, key TEXT NOT NULL, meta TEXT NOT NULL, "
    "blobs INTEGER NOT NULL, bytes INTEGER NOT NULL, made REAL NOT NULL, PRIMARY KEY (image_id, key))",
    "CREATE TABLE IF NOT EXISTS blobs (image_id TEXT NOT NULL, key TEXT NOT NULL, name BLOB NOT NULL, "
    "data BLOB NOT NULL, PRIMARY KEY (image_id, key, name))",
)


@dataclass(frozen=True)
class StoredRead:
    """One read: its files (or any named bytes), in the order read, and what else it said, as a JSON object. Names
    are kept as bytes (`surrogateescape`), so a file name that is no UTF-8 (a tar member's, decoded that way) comes
    back as it was."""

    blobs: Mapping[str, bytes]
    meta: Mapping[str, Any] = field(default_factory=dict)

    def meta_text(self) -> str:
        return json.dumps(dict(self.meta))

    def size(self, meta_text: str | None = None) -> int:
        """What the entry takes: its blobs' names and bytes and its meta as JSON (`meta_text`, when already made), so
        that a read of thousands of empty files under long names is not kept as if it took nothing."""
        names = sum(len(name.encode("utf-8", "surrogateescape")) for name in self.blobs)
        data = sum(len(data) for data in self.blobs.values())
        return names + data + len(self.meta_text() if meta_text is None else meta_text)


class ReadStore:
    """The kept reads in the SQLite file at `path` (sandbox/core/state_dir.py's when None; none at all when that names
    no file)."""

    def __init__(self, path: Path | None = None) -> None:
        self.path = path or _default_path()

    def load(self, image_id: str, key: str) -> StoredRead | None:
        """The read kept for `image_id` and `key`; None when there is none, or it cannot be read whole."""
        try:
            if self.path is None or not self.path.is_file():
                return None
            with closing(connect(self.path, SCHEMA)) as connection:
                connection.execute("BEGIN")
                row = connection.execute("SELECT meta, blobs, bytes FROM reads WHERE image_id = ? AND key = ?",
                                         (image_id, key)).fetchone()
                if row is None:
                    return None
                rows = connection.execute("SELECT name, data FROM blobs WHERE image_id = ? AND key = ? ORDER BY rowid",
                                          (image_id, key))
                blobs = {bytes(name).decode("utf-8", "surrogateescape"): bytes(data) for name, data in rows}
                meta = json.loads(row[0])
        except (OSError, sqlite3.Error, ValueError, TypeError):
            return None
        if not isinstance(meta, dict):
            return None
        read = StoredRead(blobs, meta)
        return read if (len(blobs), read.size(str(row[0]))) == (row[1], row[2]) else None

    def save(self, image_id: str, key: str, read: StoredRead, now: float | None = None) -> bool:
        """Keep `read` (replacing what was kept under the same id and key); False when it was not kept (over
        MAX_ENTRY_BYTES, or the file could not be written)."""
        try:
            meta_text = read.meta_text()
            size = read.size(meta_text)
        except (TypeError, ValueError):  # meta or a name that cannot be stored
            return False
        if size > MAX_ENTRY_BYTES or self.path is None:
            return False
        try:
            with closing(connect(self.path, SCHEMA)) as connection:
                connection.execute("BEGIN IMMEDIATE")
                _delete(connection, "image_id = ? AND key = ?", (image_id, key))
                connection.execute("INSERT INTO reads VALUES (?, ?, ?, ?, ?, ?)",
                                   (image_id, key, meta_text, len(read.blobs), size,
                                    time.time() if now is None else now))
                connection.executemany("INSERT INTO blobs VALUES (?, ?, ?, ?)",
                                       [(image_id, key, name.encode("utf-8", "surrogateescape"), data)
                                        for name, data in read.blobs.items()])
                _hold_under(connection, MAX_STORE_BYTES)
                connection.execute("COMMIT")
        except (OSError, sqlite3.Error, ValueError):  # ValueError: a name or meta that cannot be stored
            return False
        return True

    def forget(self, image_ids: Iterable[str]) -> None:
        """Drop every read kept for these images (removed from the engine)."""
        gone = set(image_ids)
        if gone:
            self._drop(lambda kept: gone & kept)

    def prune(self, existing: Iterable[str], listed_at: float) -> None:
        """Drop the reads of every image not in `existing`, the installed images the engine listed at `listed_at`
        (removed since their reads were kept); a read kept after that listing (a scan's image committed meanwhile)
        stays."""
        known = set(existing)
        self._drop(lambda kept: kept - known, made_before=listed_at)

    def _drop(self, which: Callable[[set[str]], set[str]], made_before: float | None = None) -> None:
        """Drop the reads of the images `which` picks out of those with reads kept (before `made_before`)."""
        try:
            if self.path is None or not self.path.is_file():
                return
            with closing(connect(self.path, SCHEMA)) as connection:
                connection.execute("BEGIN IMMEDIATE")
                kept = {str(row[0]) for row in connection.execute(
                    "SELECT DISTINCT image_id FROM reads WHERE made < ?",
                    (float("inf") if made_before is None else made_before,))}
                for image_id in which(kept):
                    _delete(connection, "image_id = ?", (image_id,))
                connection.execute("COMMIT")
        except (OSError, sqlite3.Error):
            pass  # kept until a later prune, or until the size bound drops them


def _default_path() -> Path | None:
    """The store's file; None when no state folder can be named (then nothing is kept or taken back)."""
    try:
        return state_file(FILE_NAME)
    except OSError:
        return None


def _delete(connection: sqlite3.Connection, where: str, values: Iterable[Any]) -> None:
    values = tuple(values)
    connection.execute(f"DELETE FROM blobs WHERE {where}", values)  # noqa: S608 - `where` is this module's own
    connection.execute(f"DELETE FROM reads WHERE {where}", values)  # noqa: S608


def _hold_under(connection: sqlite3.Connection, limit: int) -> None:
    """Drop the oldest entries until the kept bytes are under `limit`."""
    total = connection.execute("SELECT COALESCE(SUM(bytes), 0) FROM reads").fetchone()[0]
    for image_id, key, size in connection.execute(
            "SELECT image_id, key, bytes FROM reads ORDER BY made").fetchall():
        if total <= limit:
            return
        _delete(connection, "image_id = ? AND key = ?", (image_id, key))
        total -= size
