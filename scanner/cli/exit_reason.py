"""The exit code of a command that reports on a server (`scan`, `check`), and the one line that says why:

    exit 3: incomplete: listing skipped (the server exited with code 1 before the session started)
    exit 3: failed: internal error in probes: RuntimeError: …
    exit 1: S8 error at or above --fail-on error
    exit 1: agent-friendliness score 40/100 under --fail-under 50
    exit 1: the lock was not updated (error-level changes; review them and re-run with --accept)
    exit 0: nothing at or above --fail-on error

A scan that did not complete exits 3 whatever it found: its findings are real, but its silence is not evidence.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass
from typing import TYPE_CHECKING

from sandbox.core.untrusted import escape_for_terminal
from scanner.report.severity import NEVER, meets_fail_on, most_severe_first

if TYPE_CHECKING:
    from scanner.report.model import Finding, Report

EXIT_CLEAN = 0
EXIT_FINDINGS = 1
EXIT_INCOMPLETE = 3
MAX_RULES_NAMED = 5
MAX_LINE_CHARS = 600


@dataclass(frozen=True)
class ExitDecision:
    code: int
    reason: str

    @property
    def line(self) -> str:
        """`exit N: why`, one line with control characters shown as escapes (the reason may quote the server)."""
        return escape_for_terminal(" ".join(f"exit {self.code}: {self.reason}".split()), limit=MAX_LINE_CHARS)


LOCK_REFUSED = "the lock was not updated (error-level changes; review them and re-run with --accept)"


def decide(report: Report, fail_on: str, fail_under: int | None = None, *, lock_refused: bool = False) -> ExitDecision:
    """3 for a report that is not complete; 1 for a finding at or above fail_on, a score under fail_under, or a lock
    refresh refused (`scan --lock`); else 0."""
    decision = _decide(report, fail_on, fail_under)
    if not lock_refused or decision.code == EXIT_INCOMPLETE:
        return decision
    if decision.code == EXIT_FINDINGS:
        return ExitDecision(EXIT_FINDINGS, f"{decision.reason}; {LOCK_REFUSED}")
    return ExitDecision(EXIT_FINDINGS, LOCK_REFUSED)


def _decide(report: Report, fail_on: str, fail_under: int | None) -> ExitDecision:
    if report.status != "complete":
        return ExitDecision(EXIT_INCOMPLETE, f"{report.status}: {_what_stopped(report)}")
    failing = [finding for finding in report.findings if meets_fail_on(finding.severity, fail_on)]
    if failing:
        return ExitDecision(EXIT_FINDINGS, f"{_named(failing)} at or above --fail-on {fail_on}")
    score = report.score.value if report.score else None
    if fail_under is not None and score is not None and score < fail_under:
        return ExitDecision(EXIT_FINDINGS, f"agent-friendliness score {score}/100 under --fail-under {fail_under}")
    if fail_on == NEVER:
        return ExitDecision(EXIT_CLEAN, "--fail-on never: no finding fails the run")
    return ExitDecision(EXIT_CLEAN, f"nothing at or above --fail-on {fail_on}")


def _what_stopped(report: Report) -> str:
    """The first stage skipped that was not a choice, else the first error the scan recorded."""
    for record in report.skipped:
        if not record.chosen:
            return record.reason if report.status == "failed" else f"{record.stage} skipped ({record.reason})"
    return report.errors[0] if report.errors else "the scan did not complete"


def _named(findings: list[Finding]) -> str:
    """`S8 error`, `S8 error, B2 error ×3, S1 warning and 4 more`: most severe first, then in report order."""
    seen = Counter((finding.rule_id, finding.severity) for finding in findings)
    order = sorted(seen, key=lambda key: most_severe_first(key[1]))  # stable: report order within a severity
    names = [f"{rule} {severity}" + (f" ×{seen[rule, severity]}" if seen[rule, severity] > 1 else "")
             for rule, severity in order[:MAX_RULES_NAMED]]
    more = len(order) - MAX_RULES_NAMED
    return ", ".join(names) + (f" and {more} more" if more > 0 else "")
