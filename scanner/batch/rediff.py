"""Two releases of one package in one batch, whichever finishes first: when a release is done, the later releases
of the same package already done in this batch are diffed again, so each ends up diffed against the release just
below it as if the scans had finished in version order (N scans at once finish in any order).

A later release's report is re-diffed only when the release now below it is not the one it was diffed against: its
old release-diff findings (I12/I13, which nothing else produces) are replaced by the new comparison's, its verdict
recomputed, its report (and views) rewritten whole and its row's verdict and findings amended. Versions that do not
parse (PEP 440) are left as they were: there is no "below" to find.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

from packaging.version import Version
from pydantic import ValidationError

from sandbox.core.untrusted import escape_json_text
from scanner.batch.outcome import top_findings, worst_severity
from scanner.batch.previous import diffed
from scanner.batch.release_diff import RELEASE_DIFF_RULES
from scanner.batch.report_files import refile_report
from scanner.batch.store import Row, Store
from scanner.batch.targets import registry_release
from scanner.report.model import Report
from scanner.report.score import verdict_of


def rediff_later(store: Store, done: Row, stores: list[Path], out: Path, *, sarif: bool = False,
                 markdown: bool = False, note: Callable[[str], None] | None = None) -> list[str]:
    """Re-diff the done later releases of `done`'s package that `done` is now the baseline of; returns their keys."""
    lower = _version(done.version)
    if lower is None or done.ecosystem is None or done.name is None:
        return []
    baseline_registry = registry_release(done.target, done.ecosystem, done.name)
    amended = []
    for row in store.done_releases(done.ecosystem, done.name):
        higher = _version(row.version)
        if row.key == done.key or higher is None or higher <= lower or row.report is None:
            continue
        registry = registry_release(row.target, done.ecosystem, done.name)
        if registry and not baseline_registry:
            continue  # a folder or an archive is never a registry release's baseline (scanner.batch.previous)
        report = _read(out / row.report)
        if report is None:
            continue
        changed = diffed(without_release_diff(report), stores, registry=registry)
        if changed.changes_since != report.changes_since:
            text = escape_json_text(changed.model_dump_json(indent=2))
            refile_report(out, row.report, changed, text, sarif=sarif, markdown=markdown)
        elif _row_agrees(row, changed):
            continue
        # the row too, even when its report was rewritten already (by a run stopped before it amended the row)
        store.amend_done(row.key, verdict=changed.verdict, worst=worst_severity(changed),
                         findings=top_findings(changed))
        amended.append(row.key)
        if note is not None and changed.changes_since is not None:
            note(f"rediffed {row.batch_target.display} against {changed.changes_since.previous_version}: "
                 f"{changed.verdict}")
    return amended


def _row_agrees(row: Row, report: Report) -> bool:
    """Whether the row says what the report does (the summary and the exit code read the row)."""
    return (row.verdict, row.worst, row.findings) == (report.verdict, worst_severity(report), top_findings(report))


def without_release_diff(report: Report) -> Report:
    """The report as the scan wrote it: no `changes_since`, no I12/I13, the verdict of what is left."""
    if report.changes_since is None:
        return report
    findings = [f for f in report.findings if f.rule_id not in RELEASE_DIFF_RULES]
    return report.model_copy(update={"changes_since": None, "findings": findings,
                                     "verdict": verdict_of(findings, report.status)})


def _version(text: str | None) -> Version | None:
    try:
        return Version(text) if text else None
    except ValueError:  # InvalidVersion, or a release number past Python's integer-digit limit
        return None


def _read(path: Path) -> Report | None:
    try:
        return Report.model_validate_json(path.read_text(encoding="utf-8"))
    except (OSError, ValidationError):
        return None
