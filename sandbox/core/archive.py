"""Tar helpers for copying files into and out of containers through the Docker API."""

from __future__ import annotations

import io
import os
import tarfile
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import Any

SKIP_DIRS = frozenset({".git", "node_modules", ".venv", "venv", "__pycache__", ".mypy_cache", ".pytest_cache", "dist",
                       "build", ".tox"})


def pack_path(source: Path, arcname: str, uid: int, gid: int) -> bytes:
    """A tar of a folder (without VCS, virtualenv and build folders) or a single file, owned by uid:gid."""
    buffer = io.BytesIO()

    def owned(info: tarfile.TarInfo) -> tarfile.TarInfo | None:
        parts = Path(info.name).parts
        if any(part in SKIP_DIRS for part in parts[1:]):
            return None
        info.uid, info.gid, info.uname, info.gname = uid, gid, "", ""
        info.mode = info.mode & 0o755 if not info.issym() else info.mode
        return info

    with tarfile.open(fileobj=buffer, mode="w") as tar:
        _add_tree(tar, str(source), arcname, owned)
    return buffer.getvalue()


def _add_tree(tar: tarfile.TarFile, source: str, arcname: str,
              keep: Callable[[tarfile.TarInfo], tarfile.TarInfo | None]) -> None:
    """`tar.add(source, arcname, recursive=True, filter=keep)` without recursion (Python 3.11's recurses once a folder
    level: a folder a thousand deep was a RecursionError), in its order: each folder's entries sorted by name."""
    stack = [(source, arcname)]
    while stack:
        path, name = stack.pop()
        found = tar.gettarinfo(path, arcname=name)
        info = keep(found) if found is not None else None  # None: a socket or the like, which tarfile skips too
        if info is None:
            continue
        if info.isreg():
            with open(path, "rb") as handle:
                tar.addfile(info, handle)
        else:
            tar.addfile(info)
        if info.isdir():
            stack.extend((os.path.join(path, child), f"{name}/{child}") for child in sorted(os.listdir(path), reverse=True))


def read_member(stream_chunks, max_bytes: int = 64 * 1024 * 1024) -> bytes:  # type: ignore[no-untyped-def]
    """The bytes of the single regular file in a tar stream from `get_archive`, refusing more than max_bytes."""
    buffer = io.BytesIO()
    for chunk in stream_chunks:
        buffer.write(chunk)
        if buffer.tell() > max_bytes + 1024 * 1024:
            raise ValueError(f"archive larger than {max_bytes} bytes")
    buffer.seek(0)
    with tarfile.open(fileobj=buffer, mode="r") as tar:
        for member in tar:
            if member.isfile():
                extracted = tar.extractfile(member)
                if extracted is None:
                    break
                return extracted.read(max_bytes + 1)[:max_bytes]
    raise FileNotFoundError("no regular file in archive")


def archive_of(api: Any, container_id: str, path: str) -> Iterable[bytes] | None:
    """The engine's tar stream of `path` in the container (`get_archive`); None when the container has no such path.
    The engine answers a missing container with the same 404 as a missing path: that 404 is raised (NotFound), never
    read as "no such path", since a read that lost its container found nothing out about the image."""
    from docker.errors import NotFound  # here: the CLI imports this module's SKIP_DIRS before it needs docker

    try:
        stream, _ = api.get_archive(container_id, path)
    except NotFound:
        api.inspect_container(container_id)  # NotFound when the container itself is gone
        return None
    return stream
