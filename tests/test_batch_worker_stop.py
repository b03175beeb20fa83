"""A worker's scan told to stop (SIGTERM: a revoke, the worker shutting down) or past its soft time limit just as it
ended, while its result was being read: the job comes back stopped (the coordinator requeues it) or as the time
limit's transient failure, never as an IndexError the task would fail with for good. A real `mcp-sandbox scan` of an
empty folder (it ends at once, no Docker) runs; the stop is delivered where the finished scan's report is read."""

from __future__ import annotations

import os
import signal
from collections.abc import Callable
from pathlib import Path

import pytest

from scanner.batch import subprocess_backend
from scanner.batch.job_wire import job_payload
from scanner.batch.jobs import Job
from scanner.batch.outcome import classify
from scanner.batch.targets import BatchTarget

pytest.importorskip("celery", reason="needs mcp-sandbox[distributed]")


def _stop_while_reading(monkeypatch: pytest.MonkeyPatch, stop: Callable[[], None]) -> None:
    read = subprocess_backend._read_report

    def reading(path: Path) -> str | None:
        stop()  # the scan has ended; the backend no longer holds it and has not returned its result
        return read(path)

    monkeypatch.setattr(subprocess_backend, "_read_report", reading)


def _job(tmp_path: Path) -> dict[str, object]:
    empty = tmp_path / "empty"
    empty.mkdir()
    return job_payload(Job("k", 1, BatchTarget(str(empty))))


def test_a_sigterm_as_the_ended_scan_is_collected_gives_a_stopped_result(tmp_path: Path,
                                                                         monkeypatch: pytest.MonkeyPatch) -> None:
    from scanner.batch.worker import run_job

    _stop_while_reading(monkeypatch, lambda: os.kill(os.getpid(), signal.SIGTERM))
    before = signal.getsignal(signal.SIGTERM)
    result = run_job(_job(tmp_path), 600, work_root=tmp_path)
    assert (result.key, result.stopped) == ("k", True) and classify(result).kind == "released"
    assert signal.getsignal(signal.SIGTERM) == before  # the worker's own handling, as it was


def test_the_soft_time_limit_as_the_ended_scan_is_collected_gives_the_time_limit_s_failure(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from celery.exceptions import SoftTimeLimitExceeded

    from scanner.batch.worker import run_job

    def soft_limit() -> None:
        raise SoftTimeLimitExceeded()

    _stop_while_reading(monkeypatch, soft_limit)
    result = run_job(_job(tmp_path), 600, work_root=tmp_path)
    outcome = classify(result)
    assert (result.exit_code, outcome.kind, outcome.transient) == (3, "retry", True)
    assert outcome.error is not None and outcome.error.startswith("the scan took longer than 600 s on worker ")
