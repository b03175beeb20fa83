"""Helpers the whole-process benchmarks share: run a command and read its wall time and peak memory, alternate a
baseline with the current code in one run, export a baseline git ref's code to a temporary folder, print medians.

Both sides run as `python -m scanner` (the package's entry, which the console script calls too: it sets what the
CLI sets before it imports anything), a baseline ref with PYTHONPATH at its exported tree (the PYTHONPATH entry is
found before the editable install's finder), with the same interpreter and packages.
"""

from __future__ import annotations

import io
import os
import resource
import statistics
import subprocess
import sys
import tarfile
import time
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
CLI = ["-m", "scanner"]


@dataclass(frozen=True)
class Sample:
    seconds: float
    peak_mib: float
    code: int
    cpu_seconds: float  # the process's user and system time (steadier than wall time on a busy hour)


@dataclass(frozen=True)
class Side:
    """One side of a pair: a label, the argv (after the interpreter) and the PYTHONPATH (None: the current code)."""

    label: str
    argv: Sequence[str]
    pythonpath: Path | None = None


def run(side: Side, cwd: Path, stdout: Path | None = None) -> Sample:
    """One process: wall time from spawn to exit and its peak resident memory (its own rusage, via wait4).

    Linux carries a parent's peak resident size across fork and exec into the child's ru_maxrss, so the figure is
    the larger of the child's own peak and this benchmark's: a child that seems no bigger than this process is
    reported as nan, not as the child's."""
    floor_kib = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    env = dict(os.environ)
    env.pop("PYTHONPATH", None)
    if side.pythonpath is not None:
        env["PYTHONPATH"] = str(side.pythonpath)
    out = open(stdout, "wb") if stdout is not None else subprocess.DEVNULL
    try:
        start = time.perf_counter()
        process = subprocess.Popen([sys.executable, *side.argv], cwd=cwd, env=env, stdout=out,
                                   stderr=subprocess.DEVNULL, stdin=subprocess.DEVNULL)
        _, status, usage = os.wait4(process.pid, 0)
        seconds = time.perf_counter() - start
        process.returncode = os.waitstatus_to_exitcode(status)
    finally:
        if stdout is not None:
            out.close()  # type: ignore[union-attr]
    peak_mib = usage.ru_maxrss / 1024 if usage.ru_maxrss > floor_kib else float("nan")
    return Sample(seconds, peak_mib, process.returncode, usage.ru_utime + usage.ru_stime)


def alternate(sides: Sequence[Side], runs: int, cwd: Path) -> list[list[Sample]]:
    """`runs` samples of each side, in rotating order (each side goes first in turn), after one untimed warm-up."""
    for side in sides:
        run(side, cwd)
    samples: list[list[Sample]] = [[] for _ in sides]
    for index in range(runs):
        for step in range(len(sides)):
            which = (index + step) % len(sides)
            samples[which].append(run(sides[which], cwd))
    return samples


def median_seconds(samples: Sequence[Sample]) -> float:
    return statistics.median(s.seconds for s in samples)


def median_cpu(samples: Sequence[Sample]) -> float:
    return statistics.median(s.cpu_seconds for s in samples)


def median_peak(samples: Sequence[Sample]) -> float:
    return statistics.median(s.peak_mib for s in samples)


def export_ref(ref: str, into: Path) -> Path:
    """The tree of a git ref (scanner/ and sandbox/), extracted to `into` for a baseline run."""
    archive = subprocess.run(["git", "-C", str(ROOT), "archive", ref, "scanner", "sandbox"], check=True,
                             capture_output=True).stdout
    with tarfile.open(fileobj=io.BytesIO(archive)) as tar:
        tar.extractall(into, filter="data")
    return into


def describe_ref(ref: str) -> str:
    return subprocess.run(["git", "-C", str(ROOT), "rev-parse", "--short", ref], check=True, capture_output=True,
                          text=True).stdout.strip()


def row(label: str, baseline: Sequence[Sample], current: Sequence[Sample], memory: bool = False) -> str:
    """`label  baseline 1.234 s  current 0.456 s  ratio 0.37×` (and the median peak memory of each)."""
    before, after = median_seconds(baseline), median_seconds(current)
    text = f"{label:<28} baseline {before:7.3f} s  current {after:7.3f} s  ratio {after / before:5.2f}x"
    if memory:
        text += f"  peak {median_peak(baseline):6.1f} -> {median_peak(current):6.1f} MiB"
    return text
