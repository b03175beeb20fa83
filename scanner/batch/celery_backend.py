"""The distributed backend: each job is a Celery task on the scan queue, run by `mcp-sandbox worker` on a Docker host.

`submit` enqueues (the task's id is Celery's own, one per submission), `collect` reads finished tasks from the
result backend (and forgets them there), `stop` revokes what is in flight with SIGTERM (each worker's scan tears its
sandbox down), then with SIGKILL what has not ended after the grace period. The coordinator needs no Docker engine:
it owns the store and the summary, the workers own nothing.

`capacity` is how many tasks are on the broker or running at once (`--jobs`): enough to keep every worker busy,
few enough that a coordinator killed mid-batch leaves little queued work behind.

A coordinator restart: each task's id is the one the runner wrote into the row before the task was sent, so a rerun
finds the dead run's tasks by id (`resume`): one that ended is collected from the result backend (it is forgotten
there only at the next collect, after its row is written, so a kill in between loses nothing), one that a worker
runs (STARTED) or the broker still holds is awaited, and one the broker does not hold and no worker ran (sent by a
run killed before its send, or lost by the broker) is sent again under the same id. Whether the broker holds a
message is asked of a Redis broker only (its queue lists and its unacked hash); any other broker keeps its queues
durable, so a pending task there is awaited. With an `rpc://` result backend (the default for a broker other than
Redis) each result goes to the queue of the coordinator that sent the task, gone with it: a rerun can never collect
the dead run's tasks, so it sends each one again.
"""

from __future__ import annotations

import time
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any
from urllib.parse import urlsplit

from sandbox.core.errors import SandboxError
from sandbox.core.untrusted import escape_for_terminal
from scanner.batch.job_wire import WireError, job_payload, result_from_payload
from scanner.batch.jobs import Job, JobResult
from scanner.batch.worker import QUEUE, TASK_NAME

if TYPE_CHECKING:
    from celery import Celery
    from celery.result import AsyncResult

DEFAULT_CAPACITY = 16
POLL_SECONDS = 0.5
CONNECT_TIMEOUT_SECONDS = 10
EXIT_WORKER_FAILED = 3
SIGTERM, SIGKILL = 15, 9


@dataclass
class _Sent:
    job: Job
    result: AsyncResult
    began: float


def redacted(url: str) -> str:
    """The broker URL without its credentials, for progress lines."""
    parts = urlsplit(url)
    host = parts.hostname or ""
    return f"{parts.scheme}://{host}{f':{parts.port}' if parts.port else ''}{parts.path}"


class CeleryBackend:
    def __init__(self, app: Celery, capacity: int = DEFAULT_CAPACITY) -> None:
        self._app = app
        self._capacity = capacity
        self._sent: dict[str, _Sent] = {}
        self._collected: list[AsyncResult] = []  # forgotten at the next collect, once their rows are written

    @property
    def capacity(self) -> int:
        return self._capacity

    def check_broker(self) -> None:
        """Fail now, with one line, when the broker does not answer (not at the first submit)."""
        from kombu.exceptions import OperationalError

        try:
            with self._app.connection_for_write() as connection:
                connection.ensure_connection(max_retries=1, timeout=CONNECT_TIMEOUT_SECONDS)
        except (OperationalError, OSError) as exc:
            raise SandboxError(f"cannot reach the broker at {redacted(str(self._app.conf.broker_url))}: "
                               f"{type(exc).__name__}: {exc}; start it or fix --broker") from None

    def submit(self, job: Job) -> None:
        result = self._app.send_task(TASK_NAME, args=[job_payload(job)], queue=QUEUE, task_id=job.task_id)
        self._sent[job.key] = _Sent(job, result, time.monotonic())

    def resume(self, job: Job) -> str:
        if job.task_id is None or not self._results_outlive_the_coordinator():
            self.submit(job)
            return "re-sent"
        result = self._app.AsyncResult(job.task_id)
        # PENDING is asked twice: a worker may take the message off the queue between the first look and the broker's
        if result.state == "PENDING" and not self._on_broker(job.task_id) and result.state == "PENDING":
            self.submit(job)
            return "re-sent"
        self._sent[job.key] = _Sent(job, result, time.monotonic())
        return "collected" if result.ready() else "running" if result.state != "PENDING" else "queued"

    def _results_outlive_the_coordinator(self) -> bool:
        """Whether a rerun can read the dead run's results: not from `rpc://`, which sends each result to the queue of
        the client that sent the task (gone with it), so a task of the dead run, ended or yet to end, would never be
        seen ended here and be awaited forever: it is sent again instead."""
        from celery.backends.rpc import RPCBackend

        return not isinstance(self._app.backend, RPCBackend)

    def _on_broker(self, task_id: str) -> bool:
        """Whether the broker holds the task's message (queued, or delivered and not acknowledged); True for a
        broker this cannot look into."""
        if urlsplit(str(self._app.conf.broker_url)).scheme not in ("redis", "rediss"):
            return True
        with self._app.connection_for_read() as connection:
            channel = connection.default_channel
            client = channel.client
            queued = [m for pri in channel.priority_steps for m in client.lrange(channel._q_for_pri(QUEUE, pri), 0, -1)]
            unacked = list(client.hvals(channel.unacked_key))
        return any(task_id.encode() in message for message in [*queued, *unacked])

    def in_flight(self) -> list[str]:
        return list(self._sent)

    def collect(self, timeout: float) -> list[JobResult]:
        for result in self._collected:
            result.forget()
        self._collected.clear()
        deadline = time.monotonic() + timeout
        while True:
            ended = [key for key, sent in self._sent.items() if sent.result.ready()]
            if ended or time.monotonic() >= deadline or not self._sent:
                return [self._result(self._sent.pop(key)) for key in ended]
            time.sleep(min(POLL_SECONDS, max(0.0, deadline - time.monotonic())))

    def stop(self, grace: float) -> list[JobResult]:
        for sent in self._sent.values():
            sent.result.revoke(terminate=True, signal="SIGTERM")
        deadline = time.monotonic() + grace
        while time.monotonic() < deadline and not all(s.result.ready() for s in self._sent.values()):
            time.sleep(POLL_SECONDS)
        for sent in self._sent.values():
            if not sent.result.ready():
                sent.result.revoke(terminate=True, signal="SIGKILL")
            sent.result.forget()
        for result in self._collected:
            result.forget()
        results = [JobResult(s.job.key, s.job.attempt, -SIGTERM, None, "", round(time.monotonic() - s.began, 3),
                             stopped=True) for s in self._sent.values()]
        self._sent.clear()
        return results

    def _result(self, sent: _Sent) -> JobResult:
        try:
            if sent.result.successful():
                return result_from_payload(sent.result.result)
            return self._failed(sent, sent.result.result)
        except WireError as exc:
            return self._failed(sent, exc)
        finally:
            self._collected.append(sent.result)

    @staticmethod
    def _failed(sent: _Sent, exc: Any) -> JobResult:
        """The task did not return a result: the worker was lost past its retries (a signal-killed scan, which the
        coordinator retries), the task was revoked elsewhere, or it raised."""
        seconds = round(time.monotonic() - sent.began, 3)
        name = type(exc).__name__
        if name in ("WorkerLostError", "TimeLimitExceeded", "TaskRevokedError"):
            return JobResult(sent.job.key, sent.job.attempt, -SIGKILL, None,
                             f"error: the worker lost the scan ({name})", seconds)
        line = escape_for_terminal(f"{name}: {exc}", 500)
        return JobResult(sent.job.key, sent.job.attempt, EXIT_WORKER_FAILED, None,
                         f"error: the worker could not run the scan: {line}", seconds)
