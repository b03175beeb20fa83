"""The job shape, and the one interface a place that runs jobs implements (JobBackend).

One job is one scan of one target; its result is the scan's exit code, its JSON report when it wrote one, and the
last lines of its stderr (the one-line reason when there is no report). The coordinator (scanner.batch.runner) owns
the store and turns results into rows; a backend only runs jobs. The embedded backend runs each as a child process
on this machine (scanner.batch.subprocess_backend); a distributed one (Celery: enqueue on `submit`, collect from the
result backend in `collect`, revoke in `stop`) implements the same four methods.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Protocol

from scanner.batch.targets import BatchTarget


@dataclass(frozen=True)
class ScanSettings:
    """The scan options every job of a batch shares (passed to each scan as its flags)."""

    memory: str = "512m"
    startup_timeout: float | None = None
    probe_timeout: float | None = None
    install_timeout: int | None = None
    upstream_proxy: str | None = None
    max_calls: int | None = None  # the probe budget (`--max-calls`; None: the scan's own default)
    extra_flags: tuple[str, ...] = ()

    def flags(self) -> list[str]:
        flags = ["--memory", self.memory]
        for flag, value in (("--startup-timeout", self.startup_timeout), ("--probe-timeout", self.probe_timeout),
                            ("--install-timeout", self.install_timeout), ("--upstream-proxy", self.upstream_proxy),
                            ("--max-calls", self.max_calls)):
            if value is not None:
                flags += [flag, str(value)]
        return [*flags, *self.extra_flags]


@dataclass(frozen=True)
class Job:
    """`task_id`: the job's id, recorded in its row before the job is handed over, so a coordinator restarted after a
    kill finds the job again where it runs (a distributed backend's task id; the embedded one has no use for it)."""

    key: str
    attempt: int
    target: BatchTarget
    settings: ScanSettings = field(default_factory=ScanSettings)
    task_id: str | None = None

    def scan_arguments(self, json_path: str) -> list[str]:
        """The `mcp-sandbox scan` arguments of this job, its report written to json_path."""
        args = ["scan", self.target.target, "--json", json_path, "--quiet", "--fail-on", "never",
                *self.settings.flags()]
        if self.target.command:
            args += ["--command", self.target.command]
        return [*args, "--", *self.target.server_args] if self.target.server_args else args


@dataclass(frozen=True)
class JobResult:
    key: str
    attempt: int
    exit_code: int  # negative: ended by that signal
    report_json: str | None  # the JSON report, when the scan wrote one
    stderr_tail: str  # the last lines of its stderr (untrusted: escaped before it is shown)
    seconds: float
    stopped: bool = False  # ended by the batch stopping (Ctrl-C), not by anything the scan did


class JobBackend(Protocol):
    """Where jobs run."""

    @property
    def capacity(self) -> int:
        """How many jobs may run at once."""
        ...

    def submit(self, job: Job) -> None:
        """Start (or enqueue) a job; only called while fewer than `capacity` are in flight."""
        ...

    def collect(self, timeout: float) -> list[JobResult]:
        """The jobs that ended since the last call, waiting up to `timeout` seconds for the first."""
        ...

    def resume(self, job: Job) -> str:
        """Take back a job a dead coordinator had handed over (its row still running, with its task id): collect it
        if it ended, wait for it if it still runs or waits, run it again if it was lost. Returns which, in a word."""
        ...

    def in_flight(self) -> list[str]:
        """The keys of the jobs submitted or resumed and not yet collected."""
        ...

    def stop(self, grace: float) -> list[JobResult]:
        """End every job in flight (each tears its sandbox down), waiting up to `grace` seconds before forcing;
        returns their results, marked `stopped`."""
        ...
