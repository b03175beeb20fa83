"""What a finished job means for its row: done (a report exists), retry (a transient failure), failed, or released
(the batch stopped it).

How a scan says what went wrong (scanner/cli/app.py, scanner/cli/exit_reason.py):
- a report was written: `status` complete, or incomplete/failed with `errors` and `skipped` saying why; the scan
  ran, so the row is done, unless what stopped it was the engine or the registry (below), which is worth a retry;
- no report, exit 2: the target is bad (unknown package or version, no entry point): failed for good;
- no report, exit 3: a SandboxError, one `error: …` line on stderr (no engine, the registry unreachable or 5xx, the
  install failed or took too long, the engine did not answer): transient when the line says so (TRANSIENT);
- ended by a signal (the OOM killer, someone's kill) or exit 130 the batch did not cause: transient.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Literal

from pydantic import ValidationError

from sandbox.core.untrusted import escape_for_terminal
from scanner.batch.jobs import JobResult
from scanner.report.model import Report
from scanner.report.severity import most_severe_first, worst

TRANSIENT = re.compile(
    r"cannot reach the registry|the registry answered HTTP 5\d\d|the engine did not answer|no Docker engine answers"
    r"|took longer than \d+ s|stopped responding|egress sink was not ready|\bE(?:TIMEDOUT|CONNRESET|AI_AGAIN|503|502"
    r"|500)\b|\b50[234] (?:Service Unavailable|Bad Gateway|Gateway Time-?out)", re.IGNORECASE)
EXIT_USER_ERROR = 2
EXIT_INTERRUPTED = 130
MAX_ERROR_CHARS = 500
TOP_FINDINGS = 3
MAX_MESSAGE_CHARS = 200

Kind = Literal["done", "retry", "failed", "released"]


@dataclass(frozen=True)
class Outcome:
    kind: Kind
    error: str | None = None
    transient: bool = False
    report: Report | None = None
    report_json: str | None = None


def classify(result: JobResult) -> Outcome:
    if result.stopped:
        return Outcome("released", "stopped by the batch")
    report = _parsed(result.report_json)
    if report is not None:
        problem = _report_problem(report)
        if problem is not None and TRANSIENT.search(problem):
            return Outcome("retry", problem, True, report, result.report_json)
        return Outcome("done", problem, False, report, result.report_json)
    line = error_line(result)
    if result.exit_code == EXIT_USER_ERROR:
        return Outcome("failed", line, False)
    if result.exit_code < 0 or result.exit_code == EXIT_INTERRUPTED:
        return Outcome("retry", line, True)
    return Outcome("retry" if TRANSIENT.search(line) else "failed", line, bool(TRANSIENT.search(line)))


def _parsed(text: str | None) -> Report | None:
    if not text:
        return None
    try:
        return Report.model_validate_json(text)
    except ValidationError:
        return None  # a report cut short (the scan killed while writing it) is no report


def _report_problem(report: Report) -> str | None:
    """What stopped an incomplete scan, one line: its first error, else its first stage skipped not by choice."""
    if report.status == "complete":
        return None
    reasons = [*report.errors, *(f"{s.stage} skipped ({s.reason})" for s in report.skipped if not s.chosen)]
    return escape_for_terminal(reasons[0], MAX_ERROR_CHARS) if reasons else f"the scan is {report.status}"


def error_line(result: JobResult) -> str:
    """The scan's one-line reason: its last `error: …` line on stderr, else what its exit code says."""
    lines = [line.strip() for line in result.stderr_tail.splitlines() if line.strip()]
    errors = [line.removeprefix("error: ") for line in lines if line.startswith("error: ")]
    if errors:
        return escape_for_terminal(errors[-1], MAX_ERROR_CHARS)
    if result.exit_code < 0:
        return f"the scan was killed by signal {-result.exit_code}"
    tail = f": {escape_for_terminal(lines[-1], MAX_ERROR_CHARS)}" if lines else ""
    return f"the scan exited {result.exit_code} without a report{tail}"


def top_findings(report: Report, limit: int = TOP_FINDINGS) -> list[dict[str, str]]:
    """The most severe findings first (report order within a severity), as the summary shows them."""
    ordered = sorted(report.findings, key=lambda f: most_severe_first(f.severity))[:limit]
    return [{"rule_id": f.rule_id, "severity": str(f.severity), "tool": escape_for_terminal(f.tool or "", 100),
             "message": escape_for_terminal(f.message, MAX_MESSAGE_CHARS)} for f in ordered]


def worst_severity(report: Report) -> str | None:
    return str(worst(f.severity for f in report.findings)) if report.findings else None
