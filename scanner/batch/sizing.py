"""How many scans run at once by default: one a core, and no more than the free memory holds, each scan counted at
its server's memory limit (the run policy's `memory_bytes`, memory and swap, `--memory`) plus what the rest of a
scan takes beside it (the install container and proxy, the egress sink, the scan process itself)."""

from __future__ import annotations

import os
from pathlib import Path

SCAN_OVERHEAD_BYTES = 384 * 1024 * 1024  # install proxy, egress sink, the scanner process, the engine's share
RESERVE_BYTES = 512 * 1024 * 1024  # left for the host itself


def available_memory(meminfo: Path = Path("/proc/meminfo")) -> int | None:
    """MemAvailable in bytes, None where /proc/meminfo does not say (not Linux)."""
    try:
        for line in meminfo.read_text().splitlines():
            if line.startswith("MemAvailable:"):
                return int(line.split()[1]) * 1024
    except (OSError, ValueError, IndexError):
        return None
    return None


def default_jobs(memory_limit: int, cores: int | None = None, available: int | None = None) -> int:
    """min(cores, (available - reserve) // (memory_limit + overhead)), at least 1."""
    cores = cores if cores is not None else (os.cpu_count() or 1)
    if available is None:
        return max(1, cores)
    by_memory = (available - RESERVE_BYTES) // (memory_limit + SCAN_OVERHEAD_BYTES)
    return max(1, min(cores, by_memory))
