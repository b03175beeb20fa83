"""The installed image's files two stages read beside the run: provenance (the install manifest) and the source stage
(the package's own files, found through the Python install description). Both read through one container of the image
that never starts (sandbox/core/image_files.ImageReader), created on the first read and removed by the last stage to be
done with it, and the manifest is read once for both (a cached install's lookup does not read it). A container and
an archive read fewer: each costs the engine about a tenth of a second, on the scan's two cores."""

from __future__ import annotations

import threading
from collections.abc import Callable
from typing import Any

from sandbox.core.errors import SandboxError
from sandbox.core.image_files import ImageFiles, ImageReader, ReadLimits
from sandbox.core.session import SandboxSession
from sandbox.install.container import read_manifest
from sandbox.install.request import Ecosystem, InstalledServer


class InstalledFiles:
    def __init__(self, session: SandboxSession, installed: InstalledServer, ecosystem: Ecosystem, *,
                 users: int) -> None:
        """`users`: how many stages will `release` it (the last removes the container)."""
        self.installed, self._ecosystem, self._users = installed, ecosystem, users
        self._session = session
        self._lock = threading.Lock()
        self._reader: ImageReader | None = None
        self._manifest: dict[str, Any] | SandboxError | None = installed.manifest

    def manifest(self) -> dict[str, Any]:
        """The install manifest (npm lockfile / Python install description, its lockfile as `requirements`): as the
        install read it, or read out of the image once; raises the SandboxError of that read to every caller."""
        with self._lock:
            if self._manifest is None:
                try:
                    self._manifest = read_manifest(self._session.client, self._opened().container_id, self._ecosystem)
                except SandboxError as exc:
                    self._manifest = exc
            found = self._manifest
        if isinstance(found, SandboxError):
            raise found
        return found

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

    def _opened(self) -> ImageReader:
        """The reader, its container created on first use (the caller holds the lock)."""
        if self._reader is None:
            self._reader = ImageReader(self._session, self.installed.image).__enter__()
        return self._reader
