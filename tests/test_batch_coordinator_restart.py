"""A distributed batch's coordinator killed while its tasks are in flight, then rerun with the same command, for
real: a redis-server, `batch --broker` SIGKILLed once its three tasks are sent (no worker yet), one task's message
lost from the broker, then a worker and the rerun. The rerun finds the dead run's tasks by the ids in the store:
the one that finished meanwhile is collected from the result backend, the one running awaited, the lost one sent
again; every target is done once and the worker received each task once."""

from __future__ import annotations

import re
import sqlite3
import subprocess
import time
from pathlib import Path

import pytest

from tests.celery_helpers import redis_server, workers
from tests.sandbox_helpers import CLI, REPO, ZOO

pytestmark = pytest.mark.docker
pytest.importorskip("celery", reason="needs mcp-sandbox[distributed]")

COMMANDS = ("zoo-plain", "zoo-probe-good", "zoo-paged")
RECEIVED = re.compile(r"Task mcp_sandbox\.scan\[([0-9a-f-]+)\] received")


def _command(targets: Path, out: Path, url: str) -> list[str]:
    return [*CLI, "batch", str(targets), "--out", str(out), "--broker", url, "--jobs", "3", "--retries", "0"]


def _sent_tasks(store: Path, count: int, timeout: float = 120) -> dict[str, str]:
    """target -> task id, once `count` rows are running with their task id."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if store.is_file():
            connection = sqlite3.connect(store, timeout=30)
            try:
                found = dict(connection.execute("SELECT target || ' ' || COALESCE(command, ''), task_id FROM targets "
                                                "WHERE state = 'running' AND task_id IS NOT NULL").fetchall())
            except sqlite3.OperationalError:
                found = {}
            finally:
                connection.close()
            if len(found) == count:
                return found
        time.sleep(0.2)
    raise AssertionError(f"the coordinator did not send {count} tasks in {timeout} s")


def _lose(url: str, task_id: str) -> None:
    """The broker loses one queued message (as a Redis without persistence does on a restart)."""
    import redis

    from scanner.batch.worker import QUEUE

    client = redis.Redis.from_url(url)
    lost = [m for m in client.lrange(QUEUE, 0, -1) if task_id.encode() in m]
    assert len(lost) == 1 and client.lrem(QUEUE, 1, lost[0]) == 1


def _wait_success(url: str, task_id: str, timeout: float = 400) -> None:
    from scanner.batch.worker import celery_app

    result = celery_app(url).AsyncResult(task_id)
    deadline = time.monotonic() + timeout
    while result.state != "SUCCESS":
        assert time.monotonic() < deadline, f"task {task_id} is {result.state} after {timeout} s"
        time.sleep(1)


def test_a_rerun_coordinator_collects_awaits_and_resends_the_dead_run_s_tasks(tmp_path: Path, no_leftovers) -> None:
    targets, out = tmp_path / "targets.txt", tmp_path / "out"
    targets.write_text("".join(f"{ZOO} --command {c}\n" for c in COMMANDS))
    with redis_server(tmp_path / "redis") as url:
        first = subprocess.Popen(_command(targets, out, url), cwd=REPO, stdout=subprocess.DEVNULL,
                                 stderr=subprocess.DEVNULL)
        try:
            sent = _sent_tasks(out / "batch.sqlite", len(COMMANDS))
        finally:
            first.kill()
            first.wait()
        finished, running, lost = (sent[f"{ZOO} {c}"] for c in COMMANDS)  # FIFO: the worker takes them in order
        _lose(url, lost)
        with workers(url, tmp_path / "logs", count=1):
            _wait_success(url, finished)  # ends while no coordinator runs: its result waits in the backend
            second = subprocess.run(_command(targets, out, url), cwd=REPO, capture_output=True, text=True,
                                    timeout=600)
        log = (tmp_path / "logs" / "worker0.log").read_text(errors="replace")
    assert second.returncode in (0, 1), second.stderr
    assert "3 sent by a dead run to resume" in second.stderr
    assert re.search(r"resumed 3 scans a stopped run had handed over: 1 collected, 1 re-sent, 1 (running|queued)",
                     second.stderr), second.stderr
    received = RECEIVED.findall(log)
    assert sorted(received) == sorted([finished, running, lost]), log[-3000:]  # each task ran once
    connection = sqlite3.connect(out / "batch.sqlite")
    rows = connection.execute("SELECT state, attempts, status FROM targets").fetchall()
    connection.close()
    assert rows == [("done", 1, "complete")] * len(COMMANDS)
