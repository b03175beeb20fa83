"""The embedded store of a batch: DIR/batch.sqlite (SQLite, WAL), one row per target.

    queued ──claim──▶ running ──done──▶ done         (a report exists: complete or incomplete)
       ▲                 │──transient, attempts left──▶ queued, not before now + backoff
       │                 │──permanent, or no attempts left──▶ failed
       └──release / a dead run's row (requeue_abandoned)──┘   (left running MAX_ABANDONED times: failed)
    skipped: an entry the scan cannot vet (OCI, remote); never claimed.

Only the coordinator writes the store (workers, local or remote, hand results back), so one writer at a time; the
batch directory's lock (runner.BatchLock) makes every row left `running` at start-up a dead run's, which is requeued
without counting its attempt against the retries; the times a row was left so are counted apart (`abandoned`), and a
row that every run dies on (a target whose scan or result takes the coordinator down) is failed after MAX_ABANDONED.
Every change is one transaction: a SIGKILL loses at most the scans in flight.
"""

from __future__ import annotations

import json
import sqlite3
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from scanner.batch.targets import BatchTarget

STATES = ("queued", "running", "done", "failed", "skipped")
SCHEMA_VERSION = "1"
# Every lookup a finished job makes is an index's (claim in input order, the package's releases, whether a report path
# is taken): a table scan each made the coordinator's time a job grow with the store (50 ms at 80,000 targets).
# targets_state (state, not_before, position), the index of earlier versions, made the claim sort every queued row.
SCHEMA = """
CREATE TABLE IF NOT EXISTS meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS targets (
    key TEXT PRIMARY KEY,
    position INTEGER NOT NULL,
    target TEXT NOT NULL,
    command TEXT,
    server_args TEXT NOT NULL DEFAULT '[]',
    origin TEXT NOT NULL DEFAULT '',
    state TEXT NOT NULL CHECK (state IN ('queued', 'running', 'done', 'failed', 'skipped')),
    attempts INTEGER NOT NULL DEFAULT 0,
    not_before REAL NOT NULL DEFAULT 0,
    status TEXT, verdict TEXT, score INTEGER, worst TEXT,
    ecosystem TEXT, name TEXT, version TEXT,
    findings TEXT NOT NULL DEFAULT '[]',
    report TEXT,
    error TEXT, transient INTEGER NOT NULL DEFAULT 0,
    started_at REAL, finished_at REAL, seconds REAL, scan_seconds REAL,
    task_id TEXT,
    abandoned INTEGER NOT NULL DEFAULT 0,
    rediff INTEGER NOT NULL DEFAULT 0
);
DROP INDEX IF EXISTS targets_state;
CREATE INDEX IF NOT EXISTS targets_queue ON targets (state, position);
CREATE INDEX IF NOT EXISTS targets_package ON targets (ecosystem, name, state, position);
CREATE INDEX IF NOT EXISTS targets_report ON targets (report COLLATE NOCASE);
"""
# (name, type) of the columns added after schema 1 first shipped
ADDED_COLUMNS = (("task_id", "TEXT"), ("abandoned", "INTEGER NOT NULL DEFAULT 0"),
                 ("rediff", "INTEGER NOT NULL DEFAULT 0"))
MAX_ABANDONED = 3  # a row left running by this many dead runs is failed, not queued again
BACKOFF_BASE_SECONDS = 5.0
BACKOFF_CAP_SECONDS = 300.0


@dataclass(frozen=True)
class Row:
    key: str
    position: int
    target: str
    command: str | None
    server_args: tuple[str, ...]
    origin: str
    state: str
    attempts: int
    not_before: float
    status: str | None = None
    verdict: str | None = None
    score: int | None = None
    worst: str | None = None
    ecosystem: str | None = None
    name: str | None = None
    version: str | None = None
    findings: list[dict[str, str]] = field(default_factory=list)
    report: str | None = None
    error: str | None = None
    transient: bool = False
    started_at: float | None = None
    finished_at: float | None = None
    seconds: float | None = None
    scan_seconds: float | None = None
    task_id: str | None = None  # the job's id where it runs, while the row is running (scanner.batch.jobs.Job)
    abandoned: int = 0  # how many dead runs left this row running (requeue_abandoned)
    rediff: bool = False  # done, the later releases' re-diff against it not yet finished (scanner.batch.rediff)

    @property
    def batch_target(self) -> BatchTarget:
        return BatchTarget(self.target, self.command, self.server_args, self.origin)


@dataclass(frozen=True)
class ScanRecord:
    """What a finished scan puts into its row (scanner.batch.outcome reads it from the report)."""

    status: str
    verdict: str | None
    score: int | None
    worst: str | None
    ecosystem: str | None
    name: str | None
    version: str | None
    findings: list[dict[str, str]]
    report: str
    scan_seconds: float | None
    error: str | None = None


def backoff_seconds(attempt: int, base: float = BACKOFF_BASE_SECONDS, cap: float = BACKOFF_CAP_SECONDS) -> float:
    """The wait before attempt `attempt + 1`, after `attempt` attempts: base, 2×base, 4×base, … up to cap."""
    return min(cap, base * 2 ** max(0, attempt - 1))


class Store:
    def __init__(self, connection: sqlite3.Connection) -> None:
        self._db = connection

    @classmethod
    @contextmanager
    def open(cls, path: Path) -> Iterator[Store]:
        connection = sqlite3.connect(path, timeout=30, isolation_level=None)
        try:
            connection.row_factory = sqlite3.Row
            connection.execute("PRAGMA journal_mode=WAL")
            connection.execute("PRAGMA synchronous=NORMAL")
            connection.executescript(SCHEMA)
            _add_missing_columns(connection)
            connection.execute("INSERT OR IGNORE INTO meta VALUES ('schema', ?)", (SCHEMA_VERSION,))
            yield cls(connection)
        finally:
            connection.close()

    @contextmanager
    def _transaction(self) -> Iterator[sqlite3.Connection]:
        self._db.execute("BEGIN IMMEDIATE")
        try:
            yield self._db
        except BaseException:
            self._db.execute("ROLLBACK")
            raise
        self._db.execute("COMMIT")

    def add(self, targets: Sequence[BatchTarget]) -> int:
        """Add the targets the store does not hold yet (queued, or skipped with the reason); returns how many."""
        with self._transaction() as db:
            start = db.execute("SELECT COALESCE(MAX(position), -1) + 1 FROM targets").fetchone()[0]
            before = db.total_changes
            for offset, target in enumerate(targets):
                db.execute("INSERT OR IGNORE INTO targets (key, position, target, command, server_args, origin, "
                           "state, error) VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
                           (target.key, start + offset, target.target, target.command,
                            json.dumps(list(target.server_args)), target.origin,
                            "skipped" if target.unsupported else "queued", target.unsupported))
            return db.total_changes - before

    def requeue_abandoned(self, *, keep_sent: bool = False, now: float = 0.0) -> int:
        """Rows a dead run left `running` go back to the queue; the attempt it did not finish is not counted against
        the retries, but the row's `abandoned` count grows, and a row left so MAX_ABANDONED times is failed with the
        reason (a target every run died on would otherwise be requeued, and crash the batch, forever). `keep_sent` (a
        distributed batch): rows whose job was handed over (a task id) stay running, to be resumed. Returns how many
        were requeued."""
        where = "state = 'running'" + (" AND task_id IS NULL" if keep_sent else "")
        with self._transaction() as db:
            db.execute(f"UPDATE targets SET abandoned = abandoned + 1 WHERE {where}")
            db.execute(f"UPDATE targets SET state = 'failed', transient = 0, finished_at = ?, task_id = NULL, error = "
                       f"'the batch stopped ' || abandoned || ' times while this target ran (its scan or its result "
                       f"may take the batch down); --retry-failed runs it again' WHERE {where} AND abandoned >= ?",
                       (now, MAX_ABANDONED))
            return db.execute(f"UPDATE targets SET state = 'queued', attempts = MAX(0, attempts - 1), started_at = "
                              f"NULL, task_id = NULL WHERE {where}").rowcount

    def handed_over(self) -> list[Row]:
        """Running rows whose job a run handed over (a task id): at start-up, the dead run's jobs to resume."""
        return [_row(r) for r in self._db.execute("SELECT * FROM targets WHERE state = 'running' AND task_id IS NOT "
                                                  "NULL ORDER BY position")]

    def requeue_failed(self) -> int:
        """`--retry-failed`: failed rows get a fresh attempt budget."""
        return self._update("UPDATE targets SET state = 'queued', attempts = 0, not_before = 0, error = NULL, "
                            "transient = 0, abandoned = 0 WHERE state = 'failed'")

    def claim(self, now: float, task_id: str | None = None) -> Row | None:
        """The first queued row due by `now`, marked running with one more attempt (and the id its job will have)."""
        with self._transaction() as db:
            found = db.execute("SELECT key FROM targets WHERE state = 'queued' AND not_before <= ? "
                               "ORDER BY position LIMIT 1", (now,)).fetchone()
            if found is None:
                return None
            db.execute("UPDATE targets SET state = 'running', attempts = attempts + 1, started_at = ?, task_id = ? "
                       "WHERE key = ?", (now, task_id, found["key"]))
        return self.row(found["key"])

    def next_due(self) -> float | None:
        """When the earliest queued row may be claimed (None: nothing is queued)."""
        value = self._db.execute("SELECT MIN(not_before) FROM targets WHERE state = 'queued'").fetchone()[0]
        return None if value is None else float(value)

    def release(self, key: str) -> None:
        """A running row whose scan was stopped (Ctrl-C): queued again, the attempt not counted."""
        self._update("UPDATE targets SET state = 'queued', attempts = MAX(0, attempts - 1), started_at = NULL, "
                     "task_id = NULL WHERE key = ? AND state = 'running'", (key,))

    def record_done(self, key: str, record: ScanRecord, now: float) -> None:
        """The row done, marked for the re-diff of the later releases against it (cleared by `rediffed` once that
        is finished; a run that dies between the two leaves the mark for the next run's `pending_rediffs`)."""
        self._update(
            "UPDATE targets SET state = 'done', status = ?, verdict = ?, score = ?, worst = ?, ecosystem = ?, "
            "name = ?, version = ?, findings = ?, report = ?, error = ?, transient = 0, finished_at = ?, "
            "seconds = ? - started_at, scan_seconds = ?, rediff = 1 WHERE key = ? AND state = 'running'",
            (record.status, record.verdict, record.score, record.worst, record.ecosystem, record.name,
             record.version, json.dumps(record.findings), record.report, record.error, now, now,
             record.scan_seconds, key))

    def amend_done(self, key: str, *, verdict: str | None, worst: str | None, findings: list[dict[str, str]]) -> None:
        """A done row whose report was rewritten (re-diffed against a release done after it): its new verdict."""
        self._update("UPDATE targets SET verdict = ?, worst = ?, findings = ? WHERE key = ? AND state = 'done'",
                     (verdict, worst, json.dumps(findings), key))

    def pending_rediffs(self) -> list[Row]:
        """The done rows whose later releases' re-diff a dead run did not finish, in input order."""
        return [_row(r) for r in self._db.execute("SELECT * FROM targets WHERE state = 'done' AND rediff = 1 "
                                                  "ORDER BY position")]

    def rediffed(self, key: str) -> None:
        self._update("UPDATE targets SET rediff = 0 WHERE key = ?", (key,))

    def done_releases(self, ecosystem: str, name: str) -> list[Row]:
        """The done rows of one package (every version), in input order."""
        return [_row(r) for r in self._db.execute("SELECT * FROM targets WHERE state = 'done' AND ecosystem = ? AND "
                                                  "name = ? ORDER BY position", (ecosystem, name))]

    def report_taken(self, path: str, key: str) -> bool:
        """Whether a row other than `key` has its report at `path` (relative to the batch directory; letter case
        aside, as a case-insensitive file system would see it)."""
        return self._db.execute("SELECT 1 FROM targets WHERE report = ? COLLATE NOCASE AND key != ? LIMIT 1",
                                (path, key)).fetchone() is not None

    def record_failure(self, key: str, error: str, *, transient: bool, retries: int, now: float,
                       base: float = BACKOFF_BASE_SECONDS) -> str:
        """A scan that gave no usable report: retried after a backoff while it is transient and attempts are left
        (at most 1 + retries in all), else failed. Returns the row's new state."""
        row = self.row(key)
        if transient and row.attempts <= retries:
            self._update("UPDATE targets SET state = 'queued', not_before = ?, error = ?, transient = 1, "
                         "started_at = NULL, task_id = NULL WHERE key = ? AND state = 'running'",
                         (now + backoff_seconds(row.attempts, base), error, key))
            return "queued"
        self._update("UPDATE targets SET state = 'failed', error = ?, transient = ?, finished_at = ?, "
                     "seconds = ? - started_at WHERE key = ? AND state = 'running'",
                     (error, int(transient), now, now, key))
        return "failed"

    def row(self, key: str) -> Row:
        found = self._db.execute("SELECT * FROM targets WHERE key = ?", (key,)).fetchone()
        if found is None:
            raise KeyError(key)
        return _row(found)

    def rows(self) -> list[Row]:
        return [_row(r) for r in self._db.execute("SELECT * FROM targets ORDER BY position")]

    def counts(self) -> dict[str, int]:
        found = dict(self._db.execute("SELECT state, COUNT(*) FROM targets GROUP BY state").fetchall())
        return {state: int(found.get(state, 0)) for state in STATES}

    def _update(self, sql: str, parameters: tuple[Any, ...] = ()) -> int:
        with self._transaction() as db:
            return db.execute(sql, parameters).rowcount


def _add_missing_columns(connection: sqlite3.Connection) -> None:
    """A store an earlier version made lacks the columns added since (each nullable, so old rows read as before)."""
    present = {row[1] for row in connection.execute("PRAGMA table_info(targets)")}
    for column, kind in ADDED_COLUMNS:
        if column not in present:
            connection.execute(f"ALTER TABLE targets ADD COLUMN {column} {kind}")


def _row(found: sqlite3.Row) -> Row:
    values = dict(found)
    values["server_args"] = tuple(json.loads(values["server_args"]))
    values["findings"] = json.loads(values["findings"])
    values["transient"] = bool(values["transient"])
    values["rediff"] = bool(values["rediff"])
    return Row(**values)
