"""Files read out of an image through the engine's archive API: a container created from the image and never
started (`/bin/false`, no network), `get_archive` of a folder, the tar parsed in memory as it streams and nothing
extracted to disk. Member names are untrusted: a name that is absolute, climbs with `..` or is not a regular file
(links, devices) is never kept. Bounded: bytes streamed, bytes kept, files kept and each file's size."""

from __future__ import annotations

import io
import tarfile
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, field
from pathlib import PurePosixPath

from docker.errors import APIError
from urllib3.exceptions import HTTPError

from sandbox.core.archive import archive_of
from sandbox.core.errors import SandboxError
from sandbox.core.session import SandboxSession

MAX_STREAM_BYTES = 512 * 1024 * 1024  # read off the engine per folder before the read stops (partial)
MAX_KEPT_BYTES = 64 * 1024 * 1024  # kept in memory over the whole read
MAX_FILES = 5_000
END_BLOCKS_BYTES = 2 * tarfile.BLOCKSIZE  # what ends every tar archive
TAIL_BYTES = 64 * 1024  # at least this much of the stream's end is kept: the end blocks and any padding to a record


@dataclass(frozen=True)
class ReadLimits:
    max_file_bytes: int  # 0: no per-file limit
    max_kept_bytes: int = MAX_KEPT_BYTES
    max_files: int = MAX_FILES
    max_stream_bytes: int = MAX_STREAM_BYTES


@dataclass
class ImageFiles:
    """What was read: each kept file's bytes by its path below the folder read (posix, no leading `./`), how many
    were over the per-file limit, and whether a bound cut the read short (then the files are a partial set)."""

    files: dict[str, bytes] = field(default_factory=dict)
    too_big: list[str] = field(default_factory=list)
    cut: str | None = None  # why the read stopped early
    missing: list[str] = field(default_factory=list)  # folders the image does not have
    kept_bytes: int = 0


class _Counted(io.RawIOBase):
    """The archive stream as a file, refusing to read past `limit` bytes (then `over` is set); it keeps at least the
    last TAIL_BYTES it gave, for the check of the archive's end."""

    def __init__(self, chunks: Iterable[bytes], limit: int) -> None:
        self._chunks: Iterator[bytes] = iter(chunks)
        self._pending = b""
        self.read_bytes, self.limit, self.over = 0, limit, False
        self.tail = bytearray()

    def drain(self) -> None:
        """Read what is left of the stream (within the limit)."""
        buffer = bytearray(64 * 1024)
        while self.readinto(buffer):
            pass

    def readable(self) -> bool:
        return True

    def readinto(self, buffer: bytearray | memoryview) -> int:  # type: ignore[override]
        while not self._pending:
            chunk = next(self._chunks, None)
            if chunk is None or self.over:
                return 0
            self._pending = chunk
        if self.read_bytes + len(self._pending) > self.limit:
            self.over = True
            return 0
        n = min(len(buffer), len(self._pending))
        buffer[:n], self._pending = self._pending[:n], self._pending[n:]
        self.read_bytes += n
        self.tail += buffer[:n]
        if len(self.tail) > 2 * TAIL_BYTES:  # trimmed now and then, not on every read: each byte moves about once
            del self.tail[:-TAIL_BYTES]
        return n


def safe_member_path(name: str) -> str | None:
    """The member's path below the folder read (its first component is the folder's own name; "" for the folder or
    file read itself), or None for a name that is absolute, climbs out with `..`, or is empty."""
    parts = PurePosixPath(name).parts
    if not parts or name.startswith("/") or any(part in ("..", "") for part in parts):
        return None
    return "/".join(part for part in parts[1:] if part != ".")


def _joined(prefix: str, path: str) -> str:
    return f"{prefix}/{path}" if prefix and path else prefix or path


class ArchiveBroken(SandboxError):
    """The engine's archive stream ended before the archive did, or broke off: what was read is not the folder."""


def _ended(stream: _Counted, end: int) -> bool:
    """Whether the archive whose members ended at offset `end` was followed by its end-of-archive blocks (two of
    zeros, and zeros only up to the stream's end): tarfile stops as quietly at a stream cut short (no more bytes, a
    short block, an error message where a header should be) as at the real end, and says nothing of which it was."""
    stream.drain()
    trailing = stream.read_bytes - end
    return END_BLOCKS_BYTES <= trailing <= len(stream.tail) and not any(stream.tail[len(stream.tail) - trailing:])


def read_tar(chunks: Iterable[bytes], keep: Callable[[str], bool], limits: ReadLimits, out: ImageFiles,
             prefix: str = "") -> None:
    """Add to `out` each regular file of a `get_archive` stream whose path (`prefix`/the path below the folder read)
    `keep` accepts, within the limits. Raises ArchiveBroken when the stream ends or breaks before the archive does
    (a bound that stops the read early is a cut, noted in `out`, not an error)."""
    stream, ended = _Counted(chunks, limits.max_stream_bytes), False
    try:
        with tarfile.open(fileobj=io.BufferedReader(stream), mode="r|") as tar:
            for member in tar:
                inner = safe_member_path(member.name)
                path = _joined(prefix, inner) if inner is not None else ""
                if not path or not member.isfile() or not keep(path):
                    continue
                if limits.max_file_bytes and member.size > limits.max_file_bytes:
                    out.too_big.append(path)
                    continue
                if len(out.files) >= limits.max_files or out.kept_bytes + member.size > limits.max_kept_bytes:
                    out.cut = f"more than {limits.max_files} files or {limits.max_kept_bytes} bytes to read"
                    return
                extracted = tar.extractfile(member)
                if extracted is not None:
                    out.files[path] = extracted.read(member.size)
                    out.kept_bytes += len(out.files[path])
            ended = _ended(stream, tar.offset)
    except tarfile.ReadError as exc:
        if not stream.over:
            raise ArchiveBroken(f"the engine's archive could not be read: {exc}") from exc
    except HTTPError as exc:  # the engine's connection broke off mid-stream
        raise ArchiveBroken(f"the engine's archive stream broke off: {exc}") from exc
    if stream.over:
        out.cut = f"an archive was over {limits.max_stream_bytes} bytes"
    elif not ended:
        raise ArchiveBroken("the engine's archive stream ended before the archive's end")


class ImageReader:
    """A container created from `image` and never started, to read folders of the image through `get_archive`;
    removed on exit. Creating it raises APIError when the engine cannot."""

    def __init__(self, session: SandboxSession, image: str) -> None:
        self._session, self._image, self._container = session, image, ""

    def __enter__(self) -> ImageReader:
        self._container = self._session.create_container("read-source", image=self._image, command=["/bin/false"],
                                                         entrypoint=[], network_disabled=True)
        return self

    def __exit__(self, *exc: object) -> None:
        self._session.remove_container(self._container)

    @property
    def container_id(self) -> str:
        """The reader's container (created on entry), for another read through the engine's archive API."""
        return self._container

    def read(self, folder: str, prefix: str, keep: Callable[[str], bool], limits: ReadLimits,
             out: ImageFiles) -> bool:
        """Add the kept files of `folder` (a file, too) to `out`, their paths `prefix`/below it; False when the image
        has no such path."""
        stream = archive_of(self._session.client.api, self._container, folder)
        if stream is None:
            out.missing.append(folder)
            return False
        read_tar(stream, keep, limits, out, prefix)
        return True


__all__ = ["APIError", "ArchiveBroken", "ImageFiles", "ImageReader", "ReadLimits", "read_tar", "safe_member_path"]
