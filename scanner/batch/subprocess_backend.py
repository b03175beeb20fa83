"""The embedded backend: each job is a `mcp-sandbox scan --json` child process on this machine.

A child process, not a thread: a scan that crashes or is killed takes nothing else with it, each one owns its sandbox
session (its labels carry the child's pid, so `gc` tells a live scan from a dead one), and the scan's own signal
handling tears its sandbox down. Each child starts in its own session (a Ctrl-C at the terminal reaches the
coordinator alone, which stops the children in order) and, on Linux, asks the kernel for SIGTERM when the
coordinator dies: a SIGKILLed batch still has its scans tear down their sandboxes.
"""

from __future__ import annotations

import ctypes
import hashlib
import os
import signal
import subprocess
import sys
import time
from dataclasses import dataclass
from pathlib import Path

from scanner.batch.jobs import Job, JobResult

SCAN_COMMAND = [sys.executable, "-m", "scanner"]
MAX_REPORT_BYTES = 64 * 1024 * 1024
STDERR_TAIL_BYTES = 4096
POLL_SECONDS = 0.1
PR_SET_PDEATHSIG = 1


@dataclass
class _Running:
    job: Job
    process: subprocess.Popen[bytes]
    json_path: Path
    stderr_path: Path
    began: float
    stopped: bool = False


def _die_with_parent(parent: int) -> None:
    """In the child before exec: SIGTERM when the coordinator dies (and at once if it already has)."""
    try:
        libc = ctypes.CDLL(None, use_errno=True)
        libc.prctl(PR_SET_PDEATHSIG, signal.SIGTERM)
    except (OSError, AttributeError):
        return  # not Linux: a SIGKILLed batch leaves its scans running; gc sweeps what they leave
    if os.getppid() != parent:
        os.kill(os.getpid(), signal.SIGTERM)


class SubprocessBackend:
    """Runs up to `jobs` scans at once; their reports and stderr go to files in `work` until collected."""

    def __init__(self, jobs: int, work: Path, command: list[str] | None = None) -> None:
        self._capacity = jobs
        self._work = work
        self._command = command or SCAN_COMMAND
        self._running: dict[str, _Running] = {}

    @property
    def capacity(self) -> int:
        return self._capacity

    def submit(self, job: Job) -> None:
        self._work.mkdir(parents=True, exist_ok=True)
        stem = f"{hashlib.sha256(job.key.encode()).hexdigest()[:16]}-{job.attempt}-{os.getpid()}"
        json_path, stderr_path = self._work / f"{stem}.json", self._work / f"{stem}.stderr"
        json_path.unlink(missing_ok=True)
        parent = os.getpid()
        with stderr_path.open("wb") as stderr:
            process = subprocess.Popen([*self._command, *job.scan_arguments(str(json_path))],
                                       stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=stderr,
                                       start_new_session=True, preexec_fn=lambda: _die_with_parent(parent))
        self._running[job.key] = _Running(job, process, json_path, stderr_path, time.monotonic())

    def resume(self, job: Job) -> str:
        """A dead coordinator's children died with it (PR_SET_PDEATHSIG): the job runs again."""
        self.submit(job)
        return "restarted"

    def in_flight(self) -> list[str]:
        return list(self._running)

    def collect(self, timeout: float) -> list[JobResult]:
        deadline = time.monotonic() + timeout
        while True:
            ended = [key for key, run in self._running.items() if run.process.poll() is not None]
            if ended or time.monotonic() >= deadline or not self._running:
                return [self._result(self._running.pop(key)) for key in ended]
            time.sleep(min(POLL_SECONDS, max(0.0, deadline - time.monotonic())))

    def stop(self, grace: float) -> list[JobResult]:
        """SIGTERM every child (the scan ends as on Ctrl-C and tears its sandbox down), SIGKILL what is left after
        `grace` seconds."""
        for run in self._running.values():
            run.stopped = True
            _signal(run.process, signal.SIGTERM)
        deadline = time.monotonic() + grace
        for run in self._running.values():
            try:
                run.process.wait(timeout=max(0.0, deadline - time.monotonic()))
            except subprocess.TimeoutExpired:
                _signal(run.process, signal.SIGKILL)
                run.process.wait()
        results = [self._result(run) for run in self._running.values()]
        self._running.clear()
        return results

    def _result(self, run: _Running) -> JobResult:
        report = _read_report(run.json_path)
        tail = _tail(run.stderr_path)
        for path in (run.json_path, run.stderr_path):
            path.unlink(missing_ok=True)
        return JobResult(run.job.key, run.job.attempt, int(run.process.returncode), report, tail,
                         round(time.monotonic() - run.began, 3), stopped=run.stopped)


def _signal(process: subprocess.Popen[bytes], signum: int) -> None:
    if process.poll() is None:
        try:
            process.send_signal(signum)
        except ProcessLookupError:
            pass


def _read_report(path: Path) -> str | None:
    try:
        if path.stat().st_size > MAX_REPORT_BYTES:
            return None
        return path.read_text("utf-8")
    except (OSError, UnicodeDecodeError):
        return None


def _tail(path: Path) -> str:
    try:
        with path.open("rb") as handle:
            handle.seek(max(0, path.stat().st_size - STDERR_TAIL_BYTES))
            return handle.read().decode("utf-8", "replace")
    except OSError:
        return ""
