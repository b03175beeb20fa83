"""The installed image's files two stages read beside the run: provenance (the install manifest) and the source stage
(the package's own files, found through the Python install description). Both read through one container of the image
that never starts (sandbox/core/image_files.ImageReader), created on the first read and removed by the last stage to be
done with it, and the manifest is read once for both (a cached install's lookup does not read it). A container and
an archive read fewer: each costs the engine about a tenth of a second, on the scan's two cores.

What was read is kept by the image's id (sandbox/core/image_reads.py): the next scan of the same image takes the
manifest and the source stage's files from there, and makes no container and no archive read at all. The store
keys each read by what was read and how (`kept`'s key), so a read made differently reads the image again."""

from __future__ import annotations

import hashlib
import json
import sys
import threading
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import Any

from sandbox.core.errors import SandboxError
from sandbox.core.image_files import ImageFiles, ImageReader, ReadLimits
from sandbox.core.image_reads import ReadStore, StoredRead
from sandbox.core.session import SandboxSession
from sandbox.install.manifest import read_manifest
from sandbox.install.installers import installer
from sandbox.install.request import Ecosystem, InstalledServer

SourceRead = tuple[ImageFiles | str, dict[str, bytes]]  # the files read, or why none; the manifests found beside
FILE, FOUND = "file:", "found:"  # a kept source read's blob names: a file read, a manifest found
MANIFEST_FORMAT = 1  # bump when the kept manifest changes other than through the code code_digest reads
# What reads a manifest (the archive helpers bound and cut what it reads).
MANIFEST_CODE = ("sandbox.install.manifest", "sandbox.core.archive", "sandbox.install.installers", __name__)


class InstalledFiles:
    def __init__(self, session: SandboxSession, installed: InstalledServer, ecosystem: Ecosystem, *,
                 users: int, store: ReadStore | None = None) -> None:
        """`users`: how many stages will `release` it (the last removes the container); `store`: where reads of
        this image are kept (None: none is, every scan reads the image)."""
        self.installed, self._ecosystem, self._users = installed, ecosystem, users
        self._session, self._store = session, store
        self._lock = threading.Lock()
        self._reader: ImageReader | None = None
        self._manifest: dict[str, Any] | SandboxError | None = None

    def manifest(self) -> dict[str, Any]:
        """The install manifest (npm lockfile / Python install description, its lockfile as `requirements`): as the
        install read it, kept from an earlier scan, or read out of the image once; raises the SandboxError of that
        read to every caller."""
        with self._lock:
            if self._manifest is None:
                self._manifest = self._found_manifest()
            found = self._manifest
        if isinstance(found, SandboxError):
            raise found
        return found

    def kept(self, key: str, read: Callable[[], SourceRead]) -> SourceRead:
        """What `read` reads (through this object's `read`), or the same read kept under `key` from an earlier scan
        of this image; a read that found files is kept (one that says why none were found is made again)."""
        key = f"source {key}"
        stored = self._load(key)
        if stored is not None:
            return _unpacked(stored)
        files, found = read()
        if not isinstance(files, str):
            self._save(key, _packed(files, found))
        return files, found

    def read(self, folder: str, prefix: str, keep: Callable[[str], bool], limits: ReadLimits, out: ImageFiles) -> bool:
        """ImageReader.read through the shared container (created now if no read made it yet)."""
        with self._lock:
            reader = self._opened()
        return reader.read(folder, prefix, keep, limits, out)

    def release(self) -> None:
        """One stage is done with the files; the last to be removes the container, if a read made one."""
        with self._lock:
            self._users -= 1
            reader = self._reader if self._users <= 0 else None
            if reader is not None:
                self._reader = None
        if reader is not None:
            reader.__exit__(None, None, None)

    def _found_manifest(self) -> dict[str, Any] | SandboxError:
        """The caller holds the lock."""
        packages = installer(self._ecosystem)
        key = (f"manifest {MANIFEST_FORMAT} {self._ecosystem} {packages.manifest_path} {packages.lockfile} "
               f"{MANIFEST_CODE_DIGEST}")
        if self.installed.manifest is not None:  # read by the install that made the image: kept for the next scan
            self._save(key, StoredRead({"manifest": json.dumps(self.installed.manifest).encode()}))
            return self.installed.manifest
        stored = self._load(key)
        if stored is not None and "manifest" in stored.blobs:
            try:
                return json.loads(stored.blobs["manifest"])  # as read_manifest parsed it, whatever its shape
            except ValueError:
                pass  # read the image
        try:
            found = read_manifest(self._session.client, self._opened().container_id, self._ecosystem)
        except SandboxError as exc:
            return exc
        self._save(key, StoredRead({"manifest": json.dumps(found).encode()}))
        return found

    def _load(self, key: str) -> StoredRead | None:
        return None if self._store is None else self._store.load(self.installed.image_id, key)

    def _save(self, key: str, read: StoredRead) -> None:
        if self._store is not None:
            self._store.save(self.installed.image_id, key, read)

    def _opened(self) -> ImageReader:
        """The reader, its container created on first use (the caller holds the lock)."""
        if self._reader is None:
            # By id, not tag: what is read is kept under the id, and a reinstall can move the tag meanwhile.
            self._reader = ImageReader(self._session, self.installed.image_id).__enter__()
        return self._reader


def _packed(files: ImageFiles, found: dict[str, bytes]) -> StoredRead:
    blobs = {**{FILE + path: data for path, data in files.files.items()},
             **{FOUND + name: data for name, data in found.items()}}
    return StoredRead(blobs, {"too_big": files.too_big, "cut": files.cut, "missing": files.missing})


def _unpacked(stored: StoredRead) -> SourceRead:
    files = ImageFiles(files={name[len(FILE):]: data for name, data in stored.blobs.items() if name.startswith(FILE)},
                       too_big=[str(path) for path in stored.meta.get("too_big") or []],
                       cut=None if stored.meta.get("cut") is None else str(stored.meta["cut"]),
                       missing=[str(path) for path in stored.meta.get("missing") or []])
    files.kept_bytes = sum(len(data) for data in files.files.values())
    return files, {name[len(FOUND):]: data for name, data in stored.blobs.items() if name.startswith(FOUND)}


def code_digest(modules: Iterable[str]) -> str:
    """A digest of these loaded modules' source files, for a kept read's key: a change to the code that makes a read
    is another read (a module without a readable source file counts by its name only)."""
    digest = hashlib.sha256()
    for name in modules:
        digest.update(name.encode())
        module = sys.modules.get(name)
        try:
            digest.update(Path(getattr(module, "__file__", None) or name).read_bytes())
        except OSError:
            digest.update(b"\0")
    return digest.hexdigest()


# Taken as this module is imported (see scanner/pipeline/source_scan.py READ_CODE_DIGEST).
MANIFEST_CODE_DIGEST = code_digest(MANIFEST_CODE)
