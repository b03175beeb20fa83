"""The batch coordinator: claim due rows while the backend has room, hand them over as jobs, record each result in
the store (and its report in DIR/reports), until nothing is queued or running.

The coordinator alone writes the store, whichever backend runs the jobs. A Ctrl-C (or SIGTERM, turned into one)
stops every job in flight (each tears its sandbox down), puts their rows back in the queue and re-raises.
"""

from __future__ import annotations

import fcntl
import os
import time
import uuid
from collections import Counter
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path

from scanner.batch.jobs import Job, JobBackend, JobResult, ScanSettings
from scanner.batch.outcome import MAX_ERROR_CHARS, Outcome, classify, top_findings, worst_severity
from scanner.batch.previous import STORE_NAME, diffed
from scanner.batch.progress import Progress
from scanner.batch.rediff import rediff_later
from scanner.batch.report_files import file_report
from scanner.batch.store import BACKOFF_BASE_SECONDS, Row, ScanRecord, Store
from scanner.batch.targets import registry_release
from scanner.errors import UsageError
from scanner.pipeline.interrupts import uninterruptible
from scanner.report.model import Report
from sandbox.core.untrusted import escape_for_terminal, escape_json_text

LOCK_NAME = "batch.lock"
COLLECT_SECONDS = 1.0
STOP_GRACE_SECONDS = 90.0


@dataclass(frozen=True)
class BatchOptions:
    out: Path
    retries: int = 2
    settings: ScanSettings = field(default_factory=ScanSettings)
    sarif: bool = False
    markdown: bool = False
    backoff_base: float = BACKOFF_BASE_SECONDS
    stop_grace: float = STOP_GRACE_SECONDS
    cache_bytes: int | None = None  # `--cache-size`: the installed-image cache's cap
    since: Path | None = None  # `--since`: another batch's store, searched for earlier releases after this one's


@contextmanager
def batch_lock(out: Path) -> Iterator[None]:
    """Hold DIR/batch.lock for the run: a second batch on the same directory is refused, and the kernel drops the
    lock when this process dies however it dies, so a row still `running` under a held lock is the dead run's."""
    with (out / LOCK_NAME).open("a+") as handle:
        try:
            fcntl.flock(handle, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            raise UsageError(f"another batch is running on {out} (it holds {out / LOCK_NAME}); wait for it or "
                             "choose another --out") from None
        handle.seek(0)
        handle.truncate()
        handle.write(f"{os.getpid()}\n")
        handle.flush()
        yield


def run_batch(store: Store, backend: JobBackend, options: BatchOptions, progress: Progress,
              clock: Callable[[], float] = time.time, sleep: Callable[[float], None] = time.sleep,
              after_done: Callable[[], None] | None = None) -> None:
    """Run every queued row to done, failed or (transient) retries exhausted; `after_done` runs after each target
    done (the install cache's eviction under `--cache-size`)."""
    try:
        _finish_rediffs(store, options, progress)
        _resume(store, backend, options, progress)
        while _step(store, backend, options, progress, clock, sleep, after_done):
            progress.update(store.counts())
    except KeyboardInterrupt:
        progress.note(f"stopping: ending {len(backend.in_flight())} scans (each tears its sandbox down)")
        # a second Ctrl-C must not cut the stop short: its rows would stay running, counted as ones the batch died on
        with uninterruptible(redeliver=False):
            for result in backend.stop(options.stop_grace):
                store.release(result.key)
        raise


def _rediff(store: Store, done: Row, options: BatchOptions, progress: Progress) -> None:
    """Re-diff the later releases against a row just done, then clear its mark (Store.record_done set it)."""
    rediff_later(store, done, _stores(options), options.out, sarif=options.sarif, markdown=options.markdown,
                 note=progress.note)
    store.rediffed(done.key)


def _finish_rediffs(store: Store, options: BatchOptions, progress: Progress) -> None:
    """The re-diffs a dead run had left unfinished (its row done, the later releases not yet diffed against it);
    one that cannot be done is said and its mark cleared, so it never stops a run again."""
    for row in store.pending_rediffs():
        try:
            _rediff(store, row, options, progress)
        except Exception as exc:  # noqa: BLE001 - one release's re-diff must not stop the batch; said, with why
            progress.note(f"{row.batch_target.display}: the later releases could not be re-diffed against it "
                          f"({_reason(exc)})")
            store.rediffed(row.key)


def _resume(store: Store, backend: JobBackend, options: BatchOptions, progress: Progress) -> None:
    """Take back the jobs a dead run had handed over (rows still running with a task id; the embedded mode requeued
    its dead run's rows before this): collected if they ended, awaited if they run or wait, re-sent if lost."""
    rows = store.handed_over()
    ways = Counter(backend.resume(_job(row, options)) for row in rows)
    if rows:
        progress.note(f"resumed {len(rows)} scans a stopped run had handed over: "
                      + ", ".join(f"{n} {way}" for way, n in sorted(ways.items())))


def _job(row: Row, options: BatchOptions) -> Job:
    return Job(row.key, row.attempts, row.batch_target, options.settings, task_id=row.task_id)


def _step(store: Store, backend: JobBackend, options: BatchOptions, progress: Progress,
          clock: Callable[[], float], sleep: Callable[[float], None],
          after_done: Callable[[], None] | None = None) -> bool:
    """Fill the backend, then collect what ended (or wait for the next retry); False when all is finished. A job the
    host could not start (out of processes or memory) stops the filling until the next step, a second on: the next
    rows would most likely fail alike, each spending an attempt, and a short spike would fail the whole queue."""
    stalled = False
    while not stalled and len(backend.in_flight()) < backend.capacity:
        row = store.claim(clock(), task_id=uuid.uuid4().hex)  # in the row before the job is handed over
        if row is None:
            break
        stalled = not _submit(store, backend, row, options, progress, clock())
    if not backend.in_flight():
        due = store.next_due()
        if due is None:
            return False
        sleep(COLLECT_SECONDS if stalled else min(COLLECT_SECONDS, max(0.0, due - clock())))
        return True
    for result in backend.collect(COLLECT_SECONDS):
        if _record(store, result, options, progress, clock()) == "done" and after_done is not None:
            after_done()
    return True


def _submit(store: Store, backend: JobBackend, row: Row, options: BatchOptions, progress: Progress,
            now: float) -> bool:
    """Hand one row's job over; False when the host could not start it (OSError). What its own text makes
    impossible (a NUL byte or an unencodable character in an argument: ValueError) fails that row; an OSError
    starting it (E2BIG, EAGAIN, ENOMEM) is a transient failure of that row, retried with backoff. Anything else (the
    broker gone) stops the batch, the row left running for the next run to requeue (and count:
    Store.requeue_abandoned)."""
    try:
        backend.submit(_job(row, options))
    except (ValueError, TypeError, OSError) as exc:
        _job_error(store, row, f"its scan could not be started ({_reason(exc)})", progress, now,
                   transient=isinstance(exc, OSError), retries=options.retries, base=options.backoff_base)
        return not isinstance(exc, OSError)
    return True


def _record(store: Store, result: JobResult, options: BatchOptions, progress: Progress, now: float) -> str:
    """record_result, one job's failure to be recorded (its report's text made something raise) failing that row
    alone, with the reason, instead of the batch (which a rerun would crash the same way)."""
    try:
        return record_result(store, result, options, progress, now)
    except Exception as exc:  # noqa: BLE001 - one hostile report must not stop every other scan; recorded in its row
        reason, row = f"its result could not be recorded ({_reason(exc)})", store.row(result.key)
        if row.state != "running":  # recorded already (what raised came after): said, the row as it is
            progress.note(f"{row.batch_target.display}: {reason}")
            return row.state
        return _job_error(store, row, reason, progress, now)


def _job_error(store: Store, row: Row, reason: str, progress: Progress, now: float, *, transient: bool = False,
               retries: int = 0, base: float = BACKOFF_BASE_SECONDS) -> str:
    state = store.record_failure(row.key, reason, transient=transient, retries=retries, now=now, base=base)
    label = "retry  " if state == "queued" else "failed "
    progress.finished(f"{label} {row.batch_target.display}: {reason} (attempt {row.attempts})", store.counts(),
                      counted=state != "queued")
    return state


def _reason(exc: BaseException) -> str:
    return escape_for_terminal(f"{type(exc).__name__}: {exc}", MAX_ERROR_CHARS)


def record_result(store: Store, result: JobResult, options: BatchOptions, progress: Progress, now: float) -> str:
    """Put one job's result into its row (and its report in place); returns the row's new state."""
    row = store.row(result.key)
    outcome = classify(result)
    if outcome.kind == "released":
        store.release(result.key)
        return "queued"
    retry_left = outcome.transient and row.attempts <= options.retries
    if outcome.report is not None and not retry_left:
        store.record_done(result.key, _scan_record(store, row, outcome, options), now)
        done = store.row(result.key)
        progress.finished(f"done    {row.batch_target.display}: {done.verdict} (status {done.status}, score "
                          f"{done.score if done.score is not None else '-'}, {result.seconds:.0f} s)", store.counts())
        _rediff(store, done, options, progress)
        return "done"
    return _job_error(store, row, outcome.error or "unknown failure", progress, now, transient=outcome.transient,
                      retries=options.retries, base=options.backoff_base)


def _scan_record(store: Store, row: Row, outcome: Outcome, options: BatchOptions) -> ScanRecord:
    report, text = outcome.report, outcome.report_json
    assert report is not None and text is not None
    report, text = _release_diffed(report, text, options,
                                   registry=registry_release(row.target, report.target.ecosystem, report.target.name))
    path = file_report(options.out, row.batch_target, report, text, sarif=options.sarif, markdown=options.markdown,
                       taken=lambda relative: store.report_taken(relative, row.key))
    return ScanRecord(status=report.status, verdict=report.verdict, score=report.score.value if report.score else None,
                      worst=worst_severity(report), ecosystem=report.target.ecosystem, name=report.target.name,
                      version=report.target.version, findings=top_findings(report), report=path,
                      scan_seconds=report.timings.total, error=outcome.error)


def _stores(options: BatchOptions) -> list[Path]:
    """Where earlier releases are looked up: this batch's store first, then --since."""
    return [options.out / STORE_NAME, *([options.since] if options.since else [])]


def _release_diffed(report: Report, text: str, options: BatchOptions, *, registry: bool) -> tuple[Report, str]:
    """The report with its release diff (I12/I13) when a store holds an earlier release of the package (a registry
    target's only, for a registry target's report)."""
    changed = diffed(report, _stores(options), registry=registry)
    if changed is report:
        return report, text
    return changed, escape_json_text(changed.model_dump_json(indent=2))
