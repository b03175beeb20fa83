"""The embedded backend: each job is a `mcp-sandbox scan --json` child process on this machine.

A child process, not a thread: a scan that crashes or is killed takes nothing else with it, each one owns its sandbox
session (its labels carry the child's pid, so `gc` tells a live scan from a dead one), and the scan's own signal
handling tears its sandbox down. Each child starts in its own session (a Ctrl-C at the terminal reaches the
coordinator alone, which stops the children in order) and, on Linux, asks the kernel for SIGTERM when the
coordinator dies: a SIGKILLed batch still has its scans tear down their sandboxes.

With `fork=True` (the embedded batch) the children are forked from a fork server that imported the scan's modules
once (scanner.batch.fork_server): the same one process a target, without the seconds each fresh child spends on
imports. Where the server cannot start (or stops answering) the backend says so once on stderr and starts each scan
afresh, as without it; a server that stopped answering is ended first (its scans with it, each retried once gone), as
it might still fork the request it had, and a fresh scan has files of its own: never two scans of one job.
"""

from __future__ import annotations

import hashlib
import os
import signal
import subprocess
import sys
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Protocol

from scanner.batch.fork_server import ForkedScan, ForkFailed, ForkServer, ForkServerError, die_with_parent
from scanner.batch.jobs import Job, JobResult

SCAN_COMMAND = [sys.executable, "-m", "scanner"]
MAX_REPORT_BYTES = 64 * 1024 * 1024
STDERR_TAIL_BYTES = 4096
POLL_SECONDS = 0.1
FORK_SERVER_LOG = "fork-server.log"


class _Process(Protocol):
    """What the backend needs of a child: a subprocess.Popen, or a ForkedScan."""

    @property
    def returncode(self) -> int | None: ...

    def poll(self) -> int | None: ...

    def wait(self, timeout: float | None = None) -> int: ...

    def send_signal(self, signum: int) -> None: ...


@dataclass
class _Running:
    job: Job
    process: _Process
    json_path: Path
    stderr_path: Path
    began: float
    stopped: bool = False


class SubprocessBackend:
    """Runs up to `jobs` scans at once; their reports and stderr go to files in `work` until collected."""

    def __init__(self, jobs: int, work: Path, command: list[str] | None = None, *, fork: bool = False) -> None:
        self._capacity = jobs
        self._work = work
        self._command = command or SCAN_COMMAND
        self._running: dict[str, _Running] = {}
        self._fork = fork and command is None and hasattr(os, "fork")
        self._server: ForkServer | None = None

    @property
    def capacity(self) -> int:
        return self._capacity

    def submit(self, job: Job) -> None:
        """Start the job's scan: forked (fork mode), else a fresh process. The two have files of their own: a fork
        server that stopped answering may have forked the scan all the same (killed with the server, that child
        ends at once), and it must not write over the fresh scan's report."""
        self._work.mkdir(parents=True, exist_ok=True)
        began = time.monotonic()
        process: _Process | None = None
        if self._fork:
            json_path, stderr_path = self._paths(job, "-forked")
            try:
                process = self._forked(job.scan_arguments(str(json_path)), stderr_path)
            except ForkFailed:  # this one scan could not be started (the server goes on): the job's failure
                if stderr_path.is_file():
                    stderr_path.unlink()
                raise
        if process is None:
            json_path, stderr_path = self._paths(job, "")
            process = self._started(job.scan_arguments(str(json_path)), stderr_path)
        self._running[job.key] = _Running(job, process, json_path, stderr_path, began)

    def _paths(self, job: Job, kind: str) -> tuple[Path, Path]:
        stem = f"{hashlib.sha256(job.key.encode()).hexdigest()[:16]}-{job.attempt}-{os.getpid()}{kind}"
        json_path = self._work / f"{stem}.json"
        json_path.unlink(missing_ok=True)
        return json_path, self._work / f"{stem}.stderr"

    def _started(self, arguments: list[str], stderr_path: Path) -> subprocess.Popen[bytes]:
        """A fresh `mcp-sandbox scan` process."""
        parent = os.getpid()
        with stderr_path.open("wb") as stderr:
            return subprocess.Popen([*self._command, *arguments], stdin=subprocess.DEVNULL,
                                    stdout=subprocess.DEVNULL, stderr=stderr, start_new_session=True,
                                    preexec_fn=lambda: die_with_parent(parent))

    def _forked(self, arguments: list[str], stderr_path: Path) -> ForkedScan | None:
        """The scan forked from the fork server (started on first use); None when forking is off or fails."""
        if not self._fork:
            return None
        try:
            if self._server is None:
                self._server = ForkServer(self._work / FORK_SERVER_LOG)
            return self._server.spawn(arguments, stderr_path)
        except ForkServerError as exc:
            print(f"note: {exc}; starting each scan as its own process instead", file=sys.stderr)
            self._fork = False
            return None

    def close(self) -> None:
        """Stop the fork server, if one runs (it also ends when this process does)."""
        if self._server is not None:
            self._server.close()
            self._server = None

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
        lost = run.process.lost if isinstance(run.process, ForkedScan) else None
        if lost is not None:  # what ended it, as the scan's own last `error:` line would say
            tail += f"\nerror: {lost}\n"
        for path in (run.json_path, run.stderr_path):
            path.unlink(missing_ok=True)
        return JobResult(run.job.key, run.job.attempt, int(run.process.returncode), report, tail,
                         round(time.monotonic() - run.began, 3), stopped=run.stopped)


def _signal(process: _Process, signum: int) -> None:
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
