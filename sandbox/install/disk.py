"""The install's bound on the engine's disk. The install container's writable layer has no size limit on an engine
whose storage cannot set one (overlay2 on ext4, as here): an install script once wrote 3 GB in 6 s (0.5 GB/s) and
200,000 empty files in 8 s (25,000/s), so within the 600 s install timeout it could fill the host's disk or use up
its inodes (`docker commit` then copies the layer again, doubling both).

So while a step runs, every CHECK_SECONDS, and once after the last step (before the commit), the host asks the
container, as the user of its idle processes (which the install cannot signal), how much of the disk under its
root filesystem is free (`stat -f /`: overlayfs reports the engine's own
filesystem, which the install cannot change) and stops the install once it has taken more than `max_bytes` or
`max_files` inodes since it began. The figure is the disk's: what another scan writes to it at the same time counts
too (README "Limitations")."""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass

from sandbox.core.errors import SandboxError

DEFAULT_MAX_BYTES = 8 * 1024**3
DEFAULT_MAX_FILES = 1_000_000
CHECK_SECONDS = 2.0
# Blocks free to a non-root user, the block size they are counted in, inodes free.
STATFS_COMMAND = ["stat", "-f", "-c", "%a %S %d", "/"]

Run = Callable[[list[str]], tuple[bytes, bytes]]


class DiskLimitReached(SandboxError):
    """The install took more of the engine's disk than its bound (the message says how much)."""


@dataclass(frozen=True)
class DiskFree:
    bytes: int
    files: int


def parse_statfs(output: bytes) -> DiskFree:
    """`stat -f -c '%a %S %d'` output as free bytes and free inodes; SandboxError when it is not three numbers."""
    fields = output.decode("ascii", errors="replace").split()
    if len(fields) != 3 or not all(field.isdigit() for field in fields):
        raise SandboxError(f"cannot read the install container's free disk space: {output[:200]!r}")
    blocks, block_size, files = map(int, fields)
    return DiskFree(bytes=blocks * block_size, files=files)


class DiskWatch:
    """What the install has taken of the engine's disk since `start`, checked against its bounds."""

    def __init__(self, run: Run, *, max_bytes: int = DEFAULT_MAX_BYTES, max_files: int = DEFAULT_MAX_FILES,
                 every: float = CHECK_SECONDS) -> None:
        self.run = run
        self.max_bytes = max_bytes
        self.max_files = max_files
        self.every = every
        self.baseline: DiskFree | None = None
        self.next_check = 0.0

    def start(self) -> None:
        self.baseline = self._free()
        self.next_check = time.monotonic() + self.every

    def check_if_due(self) -> None:
        """While a step runs: check once every `every` seconds."""
        if time.monotonic() >= self.next_check:
            self.check()

    def check(self) -> None:
        """Raise DiskLimitReached when the install has taken more than a bound since `start`."""
        if self.baseline is None:
            raise SandboxError("the install's disk watch was not started")
        now = self._free()
        self.next_check = time.monotonic() + self.every
        taken_bytes, taken_files = self.baseline.bytes - now.bytes, self.baseline.files - now.files
        if taken_bytes > self.max_bytes or taken_files > self.max_files:
            raise DiskLimitReached(
                f"the install took {taken_bytes / 1024**3:.1f} GiB and {max(0, taken_files):,} files of the engine's "
                f"disk, past its bound of {self.max_bytes / 1024**3:.1f} GiB or {self.max_files:,} files; it was "
                "stopped and nothing of it is kept")

    def _free(self) -> DiskFree:
        stdout, _ = self.run(STATFS_COMMAND)
        return parse_statfs(stdout)
