"""The store's side of a coordinator restart (the real thing, with a broker and a worker, is
tests/test_batch_coordinator_restart.py): each row gets its job's id before the job is handed over, a distributed
rerun keeps the dead run's handed-over rows running and resumes them through the backend, the embedded one requeues
them, and a store made before the task id (and the abandoned count) existed opens as before."""

from __future__ import annotations

import sqlite3
from pathlib import Path

from scanner.batch.jobs import Job, JobResult
from scanner.batch.runner import BatchOptions, run_batch
from scanner.batch.store import SCHEMA, Store
from scanner.batch.targets import BatchTarget
from tests.test_batch_store import _FakeBackend, _Quiet, _report

A, B, C = (BatchTarget(f"npm:server-{n}@1.0.0") for n in "abc")


class _Resuming(_FakeBackend):
    """The fake backend, which also takes back a dead run's jobs, and checks each job's id is in its row first."""

    def __init__(self, store: Store, script: dict[str, list[JobResult]]) -> None:
        super().__init__(script)
        self.store, self.resumed = store, []  # type: ignore[var-annotated]

    def submit(self, job: Job) -> None:
        assert job.task_id and self.store.row(job.key).task_id == job.task_id  # written before handed over
        super().submit(job)

    def resume(self, job: Job) -> str:
        self.resumed.append((job.key, job.attempt, job.task_id))
        self._running.append(job)
        return "collected"


def test_a_distributed_rerun_resumes_the_handed_over_rows_and_claims_the_rest(tmp_path: Path) -> None:
    with Store.open(tmp_path / "batch.sqlite") as store:
        store.add([A, B, C])
        store.claim(1.0, task_id="task-a")
        store.claim(1.0)  # claimed, never handed over (the run died before it had an id): requeued
        assert store.requeue_abandoned(keep_sent=True) == 1
        assert [(r.key, r.state, r.task_id) for r in store.handed_over()] == [(A.key, "running", "task-a")]
        backend = _Resuming(store, {key: [JobResult(key, 1, 0, _report(name=f"s{i}"), "", 1.0)]
                                    for i, key in enumerate((A.key, B.key, C.key))})
        quiet = _Quiet()
        run_batch(store, backend, BatchOptions(out=tmp_path, retries=0), quiet, sleep=lambda _s: None)
        assert backend.resumed == [(A.key, 1, "task-a")]  # the same attempt, under the id the dead run sent
        assert backend.submitted == [(B.key, 1), (C.key, 1)]
        assert {r.state for r in store.rows()} == {"done"} and store.row(A.key).attempts == 1
        assert "resumed 1 scans a stopped run had handed over: 1 collected" in quiet.lines


def test_the_embedded_rerun_requeues_every_running_row_and_forgets_its_id(tmp_path: Path) -> None:
    with Store.open(tmp_path / "batch.sqlite") as store:
        store.add([A])
        store.claim(1.0, task_id="task-a")
        assert store.requeue_abandoned() == 1
        row = store.row(A.key)
        assert (row.state, row.attempts, row.task_id) == ("queued", 0, None)
        assert store.handed_over() == []


def test_a_store_from_before_the_task_id_opens_and_gains_the_column(tmp_path: Path) -> None:
    path = tmp_path / "batch.sqlite"
    old = sqlite3.connect(path)
    added = ",\n    task_id TEXT,\n    abandoned INTEGER NOT NULL DEFAULT 0,\n    rediff INTEGER NOT NULL DEFAULT 0"
    assert added in SCHEMA
    old.executescript(SCHEMA.replace(added, ""))
    old.execute("INSERT INTO targets (key, position, target, state) VALUES (?, 0, ?, 'running')", (A.key, A.target))
    old.commit()
    assert not {"task_id", "abandoned", "rediff"} & {r[1] for r in old.execute("PRAGMA table_info(targets)")}
    old.close()
    with Store.open(path) as store:
        assert (store.row(A.key).task_id, store.row(A.key).abandoned, store.row(A.key).rediff) == (None, 0, False)
        assert store.requeue_abandoned(keep_sent=True) == 1  # no id: nothing to resume, so requeued
