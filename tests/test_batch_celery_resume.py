"""A distributed batch's rerun takes back the dead run's tasks through the result backend it can read them from, for
real (a redis-server, no worker, so nothing needs Docker): with `rpc://` (the default for a broker other than Redis)
a result goes to the queue of the coordinator that sent the task, which died with it, so a rerun that awaited the
dead run's queued tasks waited forever (their results could never reach it); it sends them again. A result backend
that outlives the coordinator (Redis) still has its queued task awaited, not sent twice."""

from __future__ import annotations

from pathlib import Path

import pytest

from scanner.batch.jobs import Job
from scanner.batch.targets import BatchTarget
from tests.celery_helpers import redis_server

pytest.importorskip("celery", reason="needs mcp-sandbox[distributed]")

JOB = Job('["npm:left-pad@1.3.0", null, []]', 1, BatchTarget("npm:left-pad@1.3.0"), task_id="a-dead-run-s-task")


def _messages(url: str) -> int:
    import redis

    from scanner.batch.worker import QUEUE

    return sum(f"{JOB.task_id}".encode() in message for message in redis.Redis.from_url(url).lrange(QUEUE, 0, -1))


@pytest.mark.parametrize(("results", "way", "queued"), [("rpc://", "re-sent", 2), (None, "queued", 1)])
def test_a_rerun_resends_what_only_the_dead_coordinator_could_collect(tmp_path: Path, results: str | None, way: str,
                                                                      queued: int) -> None:
    from scanner.batch.celery_backend import CeleryBackend
    from scanner.batch.worker import celery_app

    with redis_server(tmp_path / "redis") as url:
        CeleryBackend(celery_app(url, results)).submit(JOB)  # the dead run sent it; no worker has taken it yet
        assert _messages(url) == 1
        rerun = CeleryBackend(celery_app(url, results))  # a new coordinator: another client of the result backend
        assert rerun.resume(JOB) == way
        assert rerun.in_flight() == [JOB.key] and _messages(url) == queued
