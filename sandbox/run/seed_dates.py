"""The dates of what the sandbox plants (workspace seed, canary files, the seed repository's commits), drawn per scan.

Fixed dates were a fingerprint a server could read cheaply: every planted file's mtime exactly 2024-01-01T00:00:00Z
and the seed repository's commit ids the same in every scan. Each scan now draws its own: files changed at random
moments of the weeks before the scan (the canary files, a user's older credentials, months before), each directory as
new as the newest entry in it, two commits some weeks back. Only the past: a read still moves a file's atime forward.
"""

from __future__ import annotations

import random
import secrets
import time
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import PurePosixPath

DAY = 86_400
HOUR = 3_600


@dataclass(frozen=True)
class AgeRange:
    """How far before the scan a planted file was last changed: between `newest` and `oldest` seconds."""

    newest: int
    oldest: int


WORKSPACE_AGES = AgeRange(newest=2 * HOUR, oldest=35 * DAY)
CANARY_AGES = AgeRange(newest=40 * DAY, oldest=400 * DAY)
FIRST_COMMIT_AGES = AgeRange(newest=40 * DAY, oldest=200 * DAY)
COMMIT_GAP = AgeRange(newest=HOUR, oldest=20 * DAY)  # from the first commit to the second


def draw_rng() -> random.Random:
    """A generator seeded from the OS's randomness: a server cannot replay a scan's draws."""
    return random.Random(secrets.randbits(64))


def scan_time(now: float | None = None) -> int:
    """The moment the dates are drawn back from (the host's clock, which the container shares)."""
    return int(time.time() if now is None else now)


def file_times(names: Iterable[str], now: int, ages: AgeRange, rng: random.Random) -> dict[str, int]:
    """Each name's mtime: a random moment between ages.oldest and ages.newest before now (whole seconds)."""
    return {name: now - rng.randint(ages.newest, ages.oldest) for name in names}


def dir_times(times: dict[str, int]) -> dict[str, int]:
    """Each parent directory of the (relative) names: as new as the newest name under it, as a folder is when its
    files were added last."""
    dirs: dict[str, int] = {}
    for name, mtime in times.items():
        for parent in PurePosixPath(name).parents:
            key = str(parent)
            if key != ".":
                dirs[key] = max(dirs.get(key, mtime), mtime)
    return dirs


def commit_times(now: int, rng: random.Random) -> tuple[int, int]:
    """The seed repository's two commit times, oldest first, both before the workspace's files."""
    first = now - rng.randint(FIRST_COMMIT_AGES.newest, FIRST_COMMIT_AGES.oldest)
    return first, first + rng.randint(COMMIT_GAP.newest, COMMIT_GAP.oldest)


def git_date(epoch: int) -> str:
    """A date git reads as exactly that second (its internal format)."""
    return f"@{epoch} +0000"
