"""Write a file so that readers see either the old content or the new one, never a half-written file."""

from __future__ import annotations

import os
import tempfile
from pathlib import Path

from scanner.errors import UsageError


def atomic_write_bytes(path: Path, data: bytes, mode: int = 0o644, *, durable: bool = True) -> None:
    """Write data to path through a temporary file in the same directory, fsync it, then rename it into place;
    `durable` False: no fsync (whole or absent after an interrupt, not necessarily after a power cut)."""
    directory = path.parent if str(path.parent) else Path(".")
    if not directory.is_dir():
        raise UsageError(f"cannot write {path}: directory {directory} does not exist; create it or pick another path")
    fd, tmp_name = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=directory)
    try:
        with os.fdopen(fd, "wb") as handle:
            handle.write(data)
            handle.flush()
            if durable:
                os.fsync(handle.fileno())
        os.chmod(tmp_name, mode)
        os.replace(tmp_name, path)
    except BaseException:
        Path(tmp_name).unlink(missing_ok=True)
        raise
    if durable:
        _fsync_directory(directory)


def _fsync_directory(directory: Path) -> None:
    fd = os.open(directory, os.O_RDONLY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)
