"""The Celery side of a distributed batch: the app both ends configure alike, and the one task a worker runs.

One task is one job (one target, one attempt): the worker runs it exactly as the embedded backend does (a
`mcp-sandbox scan --json` child process through SubprocessBackend, in a temporary directory removed afterwards, so
the worker keeps no state) and returns the report JSON (capped, scanner.batch.job_wire) and the exit code.

Delivery (the Celery settings below):
- prefetch 1 and one scan at a time (`--concurrency 1`): a worker holds no message it is not running;
- acks late: the message is acknowledged when the scan ends, not when it starts, so a worker that dies mid-scan
  leaves it on the broker; the broker's visibility timeout (longer than the scan's hard time limit) hands it to
  another worker when no acknowledgement came, and a lost pool process (OOM killer, SIGKILL) is retried at once
  (`retry_on_worker_lost`, at most WORKER_LOST_RETRIES times; after that the coordinator's own retries decide);
- a scan past its time limit is ended like a Ctrl-C (it tears its sandbox down) and comes back as a transient
  failure ("took longer than N s"), which the coordinator retries with backoff like any other;
- revoke with SIGTERM (the coordinator's Ctrl-C) ends the scan the same way, and comes back as a stopped result
  (requeued) even when it lands as the ended scan's result is being read; only JSON crosses the broker.

Imported only by `mcp-sandbox worker` and `batch --broker`: the embedded mode never loads Celery.
"""

from __future__ import annotations

import os
import signal
import tempfile
from pathlib import Path
from types import FrameType
from typing import TYPE_CHECKING, Any
from urllib.parse import urlsplit

from scanner.batch.job_wire import job_from_payload, result_payload
from scanner.batch.jobs import Job, JobResult
from scanner.batch.subprocess_backend import SubprocessBackend

if TYPE_CHECKING:
    from celery import Celery

QUEUE = "mcp-sandbox-scans"
TASK_NAME = "mcp_sandbox.scan"
DEFAULT_SCAN_TIMEOUT = 1800
STOP_GRACE_SECONDS = 90  # `worker --stop-grace`: what an ended scan gets to tear its sandbox down
LEAST_STOP_GRACE_SECONDS = 5
HARD_LIMIT_MARGIN_SECONDS = 30
VISIBILITY_MARGIN_SECONDS = 600
WORKER_LOST_RETRIES = 1
RESULT_EXPIRES_SECONDS = 7 * 24 * 3600
COLLECT_SECONDS = 1.0
BROKER_SCHEMES = ("redis", "rediss", "amqp", "amqps", "pyamqp", "sqs")


class ScanStopped(Exception):
    """SIGTERM reached the task (a revoke from the coordinator, or the worker shutting down)."""


def result_backend_for(broker: str) -> str:
    """A Redis broker keeps the results too; any other broker sends them back over itself (`rpc://`)."""
    return broker if urlsplit(broker).scheme in ("redis", "rediss") else "rpc://"


def hard_limit(scan_timeout: int, stop_grace: int = STOP_GRACE_SECONDS) -> int:
    """When the pool process running a scan is killed: the soft limit, the teardown grace, and a margin."""
    return scan_timeout + stop_grace + HARD_LIMIT_MARGIN_SECONDS


def visibility_timeout(scan_timeout: int, stop_grace: int = STOP_GRACE_SECONDS) -> int:
    """Longer than any scan may take (the hard limit), so a message is redelivered only when its worker is gone."""
    return hard_limit(scan_timeout, stop_grace) + VISIBILITY_MARGIN_SECONDS


def transport_options(visibility: int) -> dict[str, int]:
    """The Redis transport's: the visibility timeout, and a sweep for messages past it every tenth of it (at most
    every 10 s), so a task whose worker vanished is handed out soon after the timeout, not up to 100 s later."""
    return {"visibility_timeout": visibility, "unacked_restore_interval": max(1, min(10, visibility // 10)),
            "unacked_restore_throttle": 1}


def celery_app(broker: str, result_backend: str | None = None, scan_timeout: int = DEFAULT_SCAN_TIMEOUT,
               visibility: int | None = None, stop_grace: int = STOP_GRACE_SECONDS) -> Celery:
    """`visibility`: seconds before the broker hands a delivered, unacknowledged task to another worker (default
    visibility_timeout(scan_timeout, stop_grace)); it must stay above the longest scan, or a scan still running is
    handed out again. `stop_grace`: seconds an ended scan gets to tear its sandbox down before it is killed."""
    from celery import Celery

    visibility = visibility or visibility_timeout(scan_timeout, stop_grace)
    app = Celery("mcp_sandbox", broker=broker, backend=result_backend or result_backend_for(broker))
    app.conf.update(
        task_serializer="json", result_serializer="json", accept_content=["json"], result_accept_content=["json"],
        task_default_queue=QUEUE, task_acks_late=True, task_reject_on_worker_lost=True,
        task_retry_on_worker_lost=True, task_track_started=True, worker_prefetch_multiplier=1,
        worker_concurrency=1, task_soft_time_limit=scan_timeout, task_time_limit=hard_limit(scan_timeout, stop_grace),
        broker_transport_options=transport_options(visibility),
        result_backend_transport_options={"visibility_timeout": visibility},
        result_expires=RESULT_EXPIRES_SECONDS, broker_connection_retry_on_startup=True,
        worker_hijack_root_logger=False, worker_cancel_long_running_tasks_on_connection_loss=False)
    app.task(name=TASK_NAME, max_retries=WORKER_LOST_RETRIES)(_scan_task(scan_timeout, stop_grace))
    return app


def _scan_task(scan_timeout: int, stop_grace: int) -> Any:
    def scan(payload: dict[str, Any]) -> dict[str, Any]:
        return result_payload(run_job(payload, scan_timeout, stop_grace=stop_grace))

    scan.__name__ = scan.__qualname__ = "scan"
    return scan


def run_job(payload: dict[str, Any], scan_timeout: int, work_root: Path | None = None,
            stop_grace: int = STOP_GRACE_SECONDS) -> JobResult:
    """Run one job as the embedded backend would, in a directory of its own; SIGTERM and the soft time limit end the
    scan as a Ctrl-C does (it tears its sandbox down)."""
    job = job_from_payload(payload)
    previous = signal.signal(signal.SIGTERM, _raise_stopped)
    try:
        return _run_job(job, scan_timeout, work_root, stop_grace)
    except ScanStopped:  # the stop came before the scan was started, or as its folder was removed: it is over
        return JobResult(job.key, job.attempt, -signal.SIGTERM, None, "", 0.0, stopped=True)
    finally:
        signal.signal(signal.SIGTERM, previous)


def _run_job(job: Job, scan_timeout: int, work_root: Path | None, stop_grace: int) -> JobResult:
    from celery.exceptions import SoftTimeLimitExceeded

    with tempfile.TemporaryDirectory(prefix="mcp-sandbox-worker-", dir=work_root) as work:
        backend = SubprocessBackend(1, Path(work))
        backend.submit(job)
        try:
            results: list[JobResult] = []
            while not results:
                results = backend.collect(COLLECT_SECONDS)
            return results[0]
        except ScanStopped:
            return _stopped(backend, job, stop_grace)
        except SoftTimeLimitExceeded:
            ended = _stopped(backend, job, stop_grace)
            note = f"\nerror: the scan took longer than {scan_timeout} s on worker {os.uname().nodename}"
            return JobResult(ended.key, ended.attempt, 3, None, ended.stderr_tail + note, ended.seconds)


def _stopped(backend: SubprocessBackend, job: Job, grace: int) -> JobResult:
    """The job's scan ended by the stop (it tears its sandbox down). When the stop came as its ended scan was being
    collected (the backend no longer holds it, its result not yet returned), the scan is over and its result lost:
    a stopped result, which the coordinator requeues, not an IndexError the task would fail with for good."""
    signal.signal(signal.SIGTERM, signal.SIG_IGN)  # a second stop changes nothing: the scan is being ended
    ended = backend.stop(grace)
    return ended[0] if ended else JobResult(job.key, job.attempt, -signal.SIGTERM, None, "", 0.0, stopped=True)


def _raise_stopped(signum: int, frame: FrameType | None) -> None:
    raise ScanStopped()


def run_worker(broker: str, result_backend: str | None, scan_timeout: int, loglevel: str,
               visibility: int | None = None, stop_grace: int = STOP_GRACE_SECONDS) -> None:
    """Serve scans until stopped: one at a time, from the scan queue."""
    app = celery_app(broker, result_backend, scan_timeout, visibility, stop_grace)
    app.worker_main(["worker", "--concurrency=1", "--prefetch-multiplier=1", f"--queues={QUEUE}",
                     f"--hostname=mcp-sandbox-{os.getpid()}@%h", f"--loglevel={loglevel}", "--without-gossip",
                     "--without-mingle", "--pool=prefork"])
