"""The earlier release a new report is diffed against: the batch's own store first, then `--since DIR-OR-DB` (another
batch directory or its batch.sqlite), read only.

Which release is "earlier": among the vetted versions of the same package (ecosystem and name), other than the new
one, the highest version below it when the versions parse (PEP 440, which reads most semver too); when they do not
parse, the one vetted last. A release vetted in the same batch only counts once its scan is done; when the lower one
finishes last, scanner.batch.rediff diffs the later one again.

A folder's or an archive's name and version are what its own manifest claims, so such a row is never "already
vetted" (`--since`) and never the earlier release of a registry target (it could pose as the package's last release,
with the same hosts, and hide what the real one changed); it is only ever the baseline of another folder or archive
(two local builds of one package compared).
"""

from __future__ import annotations

import sqlite3
from dataclasses import dataclass
from pathlib import Path

from packaging.version import Version
from pydantic import ValidationError

from scanner.batch.release_diff import release_changes, same_package, with_changes
from scanner.batch.targets import registry_release
from scanner.errors import UsageError
from scanner.report.model import Report

STORE_NAME = "batch.sqlite"


@dataclass(frozen=True)
class Vetted:
    version: str
    report: Path
    finished_at: float
    registry: bool = True  # a registry target's row (targets.registry_release), not a folder's or an archive's


def store_path(since: Path) -> Path:
    """`--since`: a batch directory (its batch.sqlite) or the database itself; UsageError when it is neither."""
    path = since / STORE_NAME if since.is_dir() else since
    if not path.is_file():
        raise UsageError(f"--since {since}: no batch store there (give a batch directory or its {STORE_NAME})")
    connection = _read_only(path)
    try:  # now, not as each scan's result is recorded (every row would fail, its scan done for nothing)
        connection.execute("SELECT target, state, ecosystem, name, version, report, finished_at FROM targets LIMIT 1")
    except sqlite3.DatabaseError as exc:
        raise UsageError(f"--since {since}: not a batch store ({exc})") from None
    finally:
        connection.close()
    return path


def _read_only(database: Path) -> sqlite3.Connection:
    return sqlite3.connect(f"{database.resolve().as_uri()}?mode=ro", uri=True, timeout=30)


def vetted_releases(database: Path, ecosystem: str, name: str) -> list[Vetted]:
    """The done rows of one package in a store, read only; their report paths resolved against the store's folder,
    each saying whether it is a registry target's."""
    if not database.is_file():
        return []
    connection = _read_only(database)
    try:
        found = connection.execute("SELECT target, version, report, COALESCE(finished_at, 0) FROM targets WHERE "
                                   "state = 'done' AND ecosystem = ? AND name = ? AND version IS NOT NULL AND report "
                                   "IS NOT NULL", (ecosystem, name)).fetchall()
    except sqlite3.DatabaseError as exc:
        raise UsageError(f"cannot read the batch store {database}: {exc}") from None
    finally:
        connection.close()
    base = database.resolve().parent
    return [Vetted(str(version), base / str(report), float(at), registry_release(str(target), ecosystem, name))
            for target, version, report, at in found]


def is_vetted(database: Path, ecosystem: str, name: str, version: str) -> bool:
    """Whether a registry target of that release is done in the store (a folder claiming it does not count)."""
    return any(v.version == version and v.registry for v in vetted_releases(database, ecosystem, name))


def earlier(candidates: list[Vetted], version: str) -> Vetted | None:
    """The release to compare `version` with (see the module's docstring)."""
    others = [c for c in candidates if c.version != version and c.report.is_file()]
    new = _parsed(version)
    ordered = [(parsed, c) for c in others if (parsed := _parsed(c.version)) is not None]
    if new is not None and ordered and len(ordered) == len(others):
        lower = [(parsed, c) for parsed, c in ordered if parsed < new]
        return max(lower, key=lambda item: item[0])[1] if lower else None
    return max(others, key=lambda c: c.finished_at) if others else None


def _parsed(version: str) -> Version | None:
    """The version as PEP 440 reads it, None when it does not parse: InvalidVersion, or the plain ValueError of a
    release number past Python's integer-digit limit (a manifest's version is the package author's text)."""
    try:
        return Version(version)
    except ValueError:  # InvalidVersion is one
        return None


def diffed(report: Report, stores: list[Path], *, registry: bool = True) -> Report:
    """The report with `changes_since` against the earlier release in the first store that has one (itself when no
    store does, or the earlier report cannot be read: a report cut short is no baseline). `registry`: the report is a
    registry target's, whose baseline is a registry target's too."""
    target = report.target
    if target.ecosystem is None or target.version is None:
        return report
    for database in stores:
        candidates = vetted_releases(database, target.ecosystem, target.name)
        found = earlier([c for c in candidates if c.registry or not registry], target.version)
        if found is None:
            continue
        try:
            old = Report.model_validate_json(found.report.read_text(encoding="utf-8"))
        except (OSError, ValidationError):
            continue
        if same_package(old, report):
            return with_changes(report, release_changes(old, report, str(found.report)))
    return report
