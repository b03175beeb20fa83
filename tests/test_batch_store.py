"""The batch store: the row state machine, resume after a crash that left rows running, retry backoff accounting;
and how a job's result becomes a row (transient or not), with a fake backend standing in for where jobs run."""

from __future__ import annotations

import json
import multiprocessing
import sqlite3
from pathlib import Path

import pytest

from scanner.batch.jobs import Job, JobResult
from scanner.batch.outcome import classify
from scanner.batch.progress import Progress
from scanner.batch.runner import BatchOptions, batch_lock, record_result, run_batch
from scanner.batch.store import ScanRecord, Store, backoff_seconds
from scanner.batch.targets import BatchTarget
from scanner.errors import UsageError
from scanner.report.model import Finding, Report, Skipped, TargetInfo

A, B, C = (BatchTarget(f"npm:server-{n}@1.0.0", origin=f"line {i}") for i, n in enumerate("abc", start=1))
OCI = BatchTarget("oci:docker.io/x/y", unsupported="OCI images are not supported yet")


@pytest.fixture
def store(tmp_path: Path):
    with Store.open(tmp_path / "batch.sqlite") as opened:
        yield opened


def _record(name: str = "x") -> ScanRecord:
    return ScanRecord(status="complete", verdict="pass", score=100, worst=None, ecosystem="npm", name=name,
                      version="1.0.0", findings=[], report=f"reports/npm/{name}/1.0.0.json", scan_seconds=3.0)


def test_targets_are_added_once_and_unsupported_ones_are_skipped_with_the_reason(store: Store) -> None:
    assert store.add([A, B, OCI]) == 3
    assert store.add([A, C]) == 1  # a rerun adds only what is new
    assert [(r.target, r.state) for r in store.rows()] == [(A.target, "queued"), (B.target, "queued"),
                                                           (OCI.target, "skipped"), (C.target, "queued")]
    assert store.row(OCI.key).error == "OCI images are not supported yet"


def test_claim_takes_queued_rows_in_order_and_counts_the_attempt(store: Store) -> None:
    store.add([A, B])
    first = store.claim(now=100.0)
    assert first is not None and first.key == A.key and first.state == "running" and first.attempts == 1
    assert store.claim(now=100.0).key == B.key  # type: ignore[union-attr]
    assert store.claim(now=100.0) is None
    store.record_done(A.key, _record("a"), now=105.0)
    done = store.row(A.key)
    assert (done.state, done.verdict, done.seconds, done.report) == ("done", "pass", 5.0, "reports/npm/a/1.0.0.json")
    assert store.counts() == {"queued": 0, "running": 1, "done": 1, "failed": 0, "skipped": 0}


def test_rows_a_killed_run_left_running_are_requeued_on_resume_and_done_ones_stay_done(tmp_path: Path) -> None:
    path = tmp_path / "batch.sqlite"
    with Store.open(path) as first_run:
        first_run.add([A, B, C])
        first_run.claim(1.0), first_run.claim(1.0)
        first_run.record_done(A.key, _record("a"), 2.0)
        # the run is SIGKILLed here: B is left `running`, C `queued`
    with Store.open(path) as second_run:
        assert second_run.requeue_abandoned() == 1
        assert [(r.key, r.state, r.attempts) for r in second_run.rows()] == [
            (A.key, "done", 1), (B.key, "queued", 0), (C.key, "queued", 0)]  # B's lost attempt does not count
        claimed = [second_run.claim(3.0), second_run.claim(3.0), second_run.claim(3.0)]
        assert [row.key if row else None for row in claimed] == [B.key, C.key, None]  # A is not scanned again


def test_a_transient_failure_is_retried_with_growing_backoff_up_to_retries(store: Store) -> None:
    store.add([A])
    now, waits = 1000.0, []
    for _ in range(3):
        row = store.claim(now)
        assert row is not None
        state = store.record_failure(A.key, "the registry answered HTTP 503", transient=True, retries=2, now=now,
                                     base=5.0)
        if state == "failed":
            break
        assert store.claim(now) is None  # not before the backoff has passed
        due = store.next_due()
        assert due is not None
        waits.append(due - now)
        now = due
    assert waits == [5.0, 10.0]  # 1 + 2 retries: three attempts, two waits
    final = store.row(A.key)
    assert (final.state, final.attempts, final.transient, final.error) == ("failed", 3, True,
                                                                           "the registry answered HTTP 503")
    assert store.next_due() is None


def test_a_permanent_failure_is_not_retried_and_retry_failed_gives_a_fresh_budget(store: Store) -> None:
    store.add([A])
    store.claim(1.0)
    assert store.record_failure(A.key, "npm has no server-a", transient=False, retries=5, now=2.0) == "failed"
    assert store.requeue_failed() == 1
    assert (store.row(A.key).state, store.row(A.key).attempts) == ("queued", 0)


def test_backoff_doubles_and_is_capped() -> None:
    assert [backoff_seconds(n, base=5.0, cap=30.0) for n in (1, 2, 3, 4, 5)] == [5.0, 10.0, 20.0, 30.0, 30.0]


def test_the_store_is_sqlite_in_wal_mode(tmp_path: Path) -> None:
    with Store.open(tmp_path / "batch.sqlite") as opened:
        opened.add([A])
    connection = sqlite3.connect(tmp_path / "batch.sqlite")
    assert connection.execute("PRAGMA journal_mode").fetchone()[0] == "wal"
    assert connection.execute("SELECT state FROM targets").fetchall() == [("queued",)]


def _hold_lock(out: str, ready, release) -> None:  # type: ignore[no-untyped-def]
    with batch_lock(Path(out)):
        ready.set()
        release.wait(30)


def test_a_second_batch_on_the_same_directory_is_refused(tmp_path: Path) -> None:
    ready, release = multiprocessing.Event(), multiprocessing.Event()
    holder = multiprocessing.Process(target=_hold_lock, args=(str(tmp_path), ready, release))
    holder.start()
    try:
        assert ready.wait(30)
        with pytest.raises(UsageError, match="another batch is running"):
            with batch_lock(tmp_path):
                pass
    finally:
        release.set()
        holder.join(30)
    with batch_lock(tmp_path):  # the lock went with the process that held it
        pass


def _report(status: str = "complete", errors: list[str] | None = None, findings: list[Finding] | None = None,
            name: str = "server-a") -> str:
    report = Report(target=TargetInfo(kind="npm", name=name, requested=f"npm:{name}@1.0.0", version="1.0.0",
                                      ecosystem="npm"), status=status, errors=errors or [], findings=findings or [],
                    verdict="pass" if status == "complete" else "incomplete")
    if status != "complete" and not errors:
        report.skipped.append(Skipped(stage="listing", reason="the server did not answer within 60 s"))
    return report.model_dump_json()


def _result(exit_code: int, report: str | None = None, stderr: str = "", stopped: bool = False) -> JobResult:
    return JobResult(A.key, 1, exit_code, report, stderr, 1.0, stopped=stopped)


@pytest.mark.parametrize(("result", "kind", "transient"), [
    (_result(0, _report()), "done", False),
    (_result(3, _report("incomplete")), "done", False),  # the server's own silence: its report stands
    (_result(3, _report("failed", ["the engine did not answer GET /containers/{id}/top within 120 s"])), "retry", True),
    (_result(2, None, "error: npm has no server-a@9.9.9; latest is 1.0.0\n"), "failed", False),
    (_result(3, None, "error: the registry answered HTTP 502 for npm:server-a\n"), "retry", True),
    (_result(3, None, "error: cannot reach the registry for npm:server-a (ConnectError)\n"), "retry", True),
    (_result(3, None, "error: installing server-a@1.0.0 took longer than 600 s; raise --install-timeout\n"),
     "retry", True),
    (_result(3, None, "error: installing server-a@1.0.0 failed (exit 1): npm error 404 Not Found\n"), "failed",
     False),
    (_result(-9, None, ""), "retry", True),  # the OOM killer, or a kill from outside
    (_result(130, None, "", stopped=True), "released", False),
    (_result(0, '{"schema_version": "1", "target": {', ""), "failed", False),  # a report cut short is no report
])
def test_a_result_is_classified_by_its_report_exit_code_and_error_line(result: JobResult, kind: str,
                                                                       transient: bool) -> None:
    outcome = classify(result)
    assert (outcome.kind, outcome.transient) == (kind, transient)


class _Quiet(Progress):
    def __init__(self) -> None:
        super().__init__()
        self.lines: list[str] = []

    def finished(self, what: str, counts: dict[str, int], *, counted: bool = True) -> None:
        self.lines.append(what)

    def note(self, text: str) -> None:
        self.lines.append(text)


class _FakeBackend:
    """Stands in for where jobs run: each submitted job ends at the next collect with the scripted result."""

    def __init__(self, script: dict[str, list[JobResult]]) -> None:
        self.script, self.submitted, self._running = script, [], []  # type: ignore[var-annotated]
        self.capacity = 2

    def submit(self, job: Job) -> None:
        self.submitted.append((job.key, job.attempt))
        self._running.append(job)

    def in_flight(self) -> list[str]:
        return [job.key for job in self._running]

    def collect(self, timeout: float) -> list[JobResult]:
        ended, self._running = self._running, []
        return [self.script[job.key].pop(0) for job in ended]

    def stop(self, grace: float) -> list[JobResult]:
        return []


def test_the_coordinator_retries_a_transient_failure_and_files_every_report(tmp_path: Path, store: Store) -> None:
    store.add([A, B])
    flaky = JobResult(A.key, 1, 3, None, "error: the registry answered HTTP 503 for npm:server-a\n", 1.0)
    backend = _FakeBackend({A.key: [flaky, JobResult(A.key, 2, 0, _report(), "", 1.0)],
                            B.key: [JobResult(B.key, 1, 0, _report(name="@scope/b"), "", 1.0)]})
    clock = iter(float(n) for n in range(1000))
    options = BatchOptions(out=tmp_path, retries=1, backoff_base=0.0, markdown=True)
    run_batch(store, backend, options, _Quiet(), clock=lambda: next(clock), sleep=lambda _s: None)
    assert backend.submitted == [(A.key, 1), (B.key, 1), (A.key, 2)]
    rows = {row.key: row for row in store.rows()}
    assert (rows[A.key].state, rows[A.key].attempts) == ("done", 2)
    assert rows[A.key].report == "reports/npm/server-a/1.0.0.json"  # the registry release its target names
    # B's report names another package than its target: its own file, the row's hash in the name
    b_report = rows[B.key].report
    assert b_report is not None and b_report.startswith("reports/npm/@scope/b/1.0.0+") and b_report.endswith(".json")
    assert json.loads((tmp_path / b_report).read_text())["target"]["name"] == "@scope/b"
    assert (tmp_path / b_report).with_suffix(".md").is_file()


def test_a_transient_incomplete_report_is_kept_once_the_retries_are_used(tmp_path: Path, store: Store) -> None:
    store.add([A])
    row = store.claim(1.0)
    assert row is not None
    engine = _report("failed", ["the engine did not answer POST /containers/create within 120 s"])
    state = record_result(store, JobResult(A.key, 1, 3, engine, "", 1.0), BatchOptions(out=tmp_path, retries=0),
                          _Quiet(), 2.0)
    assert state == "done"
    assert (store.row(A.key).status, store.row(A.key).error) == ("failed", "the engine did not answer POST "
                                                                 "/containers/create within 120 s")


def test_after_done_runs_once_per_target_done_not_per_retry(tmp_path: Path, store: Store) -> None:
    """The hook `--cache-size` evicts through: after each target done, never after a failed attempt."""
    store.add([A, B])
    flaky = JobResult(A.key, 1, 3, None, "error: the registry answered HTTP 503 for npm:server-a\n", 1.0)
    backend = _FakeBackend({A.key: [flaky, JobResult(A.key, 2, 0, _report(), "", 1.0)],
                            B.key: [JobResult(B.key, 1, 2, None, "error: npm has no b\n", 1.0)]})
    clock = iter(float(n) for n in range(1000))
    calls: list[int] = []
    run_batch(store, backend, BatchOptions(out=tmp_path, retries=1, backoff_base=0.0), _Quiet(),
              clock=lambda: next(clock), sleep=lambda _s: None, after_done=lambda: calls.append(1))
    assert calls == [1]  # A done (on its second attempt); B failed


def test_the_lookups_of_each_finished_job_use_an_index_not_the_whole_store(tmp_path: Path,
                                                                          monkeypatch: pytest.MonkeyPatch) -> None:
    """Each finished job claims, files its report (is the path taken?), looks up earlier releases (its own store and
    --since) and re-diffs later ones: with a table scan for each, a batch of 80,000 targets spent 50 ms of the
    coordinator's time a job, growing with the store. Every such query must use an index (counts() walks its covering
    index; rows() is read once, for the summary)."""
    statements: list[str] = []
    connect = sqlite3.connect

    def traced(*args, **kwargs):  # type: ignore[no-untyped-def]
        connection = connect(*args, **kwargs)
        connection.set_trace_callback(statements.append)
        return connection

    monkeypatch.setattr(sqlite3, "connect", traced)
    targets = [BatchTarget(f"npm:server-{n}@1.0.0") for n in range(4)]
    with Store.open(tmp_path / "batch.sqlite") as store:
        store.add(targets)
        backend = _FakeBackend({t.key: [JobResult(t.key, 1, 0, _report(name=f"server-{n}"), "", 1.0)]
                                for n, t in enumerate(targets)})
        run_batch(store, backend, BatchOptions(out=tmp_path, retries=0, since=tmp_path / "batch.sqlite"), _Quiet(),
                  sleep=lambda _s: None)
        assert {row.state for row in store.rows()} == {"done"}
    monkeypatch.undo()
    plan = sqlite3.connect(tmp_path / "batch.sqlite")
    selects = {s for s in statements if s.lstrip().upper().startswith("SELECT") and "FROM targets" in s}
    assert len(selects) >= 5
    scans = {s: [d for *_, d in plan.execute(f"EXPLAIN QUERY PLAN {s}")] for s in selects}
    whole = {s: details for s, details in scans.items()
             if any(d == "SCAN targets" or "TEMP B-TREE" in d for d in details)
             and s != "SELECT * FROM targets ORDER BY position"
             or "ecosystem =" in s and not any("(ecosystem=? AND name=?" in d for d in details)}
    assert whole == {}
