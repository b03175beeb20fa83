"""The batch's summary, from the store: DIR/summary.json (every target: state, verdict, score, top findings, its
report) and DIR/summary.md (the same as a table), and the batch's exit code.

Exit code: 1 when any target has a finding at or above --fail-on (as `scan` gates; a blocked target is the news,
so it wins over 3); else 3 when any target was not vetted completely (failed, skipped as unsupported, not run, or
its scan incomplete); else 0.
"""

from __future__ import annotations

import json
from collections import Counter
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from sandbox.core.untrusted import escape_json_text
from scanner.batch.report_files import write_whole
from scanner.batch.store import Row
from scanner.batch.summary_html import summary_html
from scanner.report.markdown import VERDICT_ICON, md
from scanner.report.severity import meets_fail_on

SUMMARY_SCHEMA = "mcp-sandbox-batch-summary/1"
EXIT_CLEAN, EXIT_FINDINGS, EXIT_INCOMPLETE = 0, 1, 3
MAX_MARKDOWN_ROWS = 5_000


@dataclass(frozen=True)
class BatchExit:
    code: int
    reason: str


def gated(row: Row, fail_on: str) -> bool:
    return row.state == "done" and row.worst is not None and meets_fail_on(row.worst, fail_on)


def vetted(row: Row) -> bool:
    return row.state == "done" and row.status == "complete"


def batch_exit(rows: list[Row], fail_on: str) -> BatchExit:
    failing = [row for row in rows if gated(row, fail_on)]
    if failing:
        return BatchExit(EXIT_FINDINGS, f"{len(failing)} of {len(rows)} targets have a finding at or above "
                         f"--fail-on {fail_on}")
    unvetted = [row for row in rows if not vetted(row)]
    if unvetted:
        states = Counter("incomplete" if row.state == "done" else row.state for row in unvetted)
        what = ", ".join(f"{count} {state}" for state, count in sorted(states.items()))
        return BatchExit(EXIT_INCOMPLETE, f"{len(unvetted)} of {len(rows)} targets not vetted completely ({what})")
    return BatchExit(EXIT_CLEAN, f"all {len(rows)} targets vetted, nothing at or above --fail-on {fail_on}")


def summary_document(rows: list[Row], fail_on: str) -> dict[str, Any]:
    decision = batch_exit(rows, fail_on)
    return {
        "schema": SUMMARY_SCHEMA,
        "fail_on": fail_on,
        "exit": {"code": decision.code, "reason": decision.reason},
        "states": dict(Counter(row.state for row in rows)),
        "verdicts": dict(Counter(row.verdict for row in rows if row.verdict)),
        "targets": [_target_entry(row, fail_on) for row in rows],
    }


def _target_entry(row: Row, fail_on: str) -> dict[str, Any]:
    return {
        "target": row.batch_target.display, "origin": row.origin, "state": row.state, "attempts": row.attempts,
        "status": row.status, "verdict": row.verdict, "score": row.score, "fails_gate": gated(row, fail_on),
        "ecosystem": row.ecosystem, "name": row.name, "version": row.version, "report": row.report,
        "error": row.error, "seconds": round(row.seconds, 3) if row.seconds is not None else None,
        "scan_seconds": row.scan_seconds, "top_findings": row.findings,
    }


def summary_markdown(rows: list[Row], fail_on: str) -> str:
    decision = batch_exit(rows, fail_on)
    states = Counter(row.state for row in rows)
    verdicts = Counter(row.verdict for row in rows if row.verdict)
    lines = ["# mcp-sandbox batch", "",
             f"**{len(rows)} targets**: " + ", ".join(f"{n} {s}" for s, n in sorted(states.items())) + ".  ",
             "Verdicts: " + (", ".join(f"{VERDICT_ICON.get(v, '')} {n} {v}" for v, n in sorted(verdicts.items()))
                             or "none yet") + ".  ",
             f"Exit {decision.code}: {md(decision.reason)}.", "",
             "| Target | State | Verdict | Score | Top findings | Report |", "|---|---|---|---|---|---|"]
    lines += [_markdown_row(row) for row in rows[:MAX_MARKDOWN_ROWS]]
    if len(rows) > MAX_MARKDOWN_ROWS:
        lines.append(f"\n{len(rows) - MAX_MARKDOWN_ROWS} more targets: see summary.json.")
    return "\n".join(lines) + "\n"


def _markdown_row(row: Row) -> str:
    verdict = f"{VERDICT_ICON.get(row.verdict, '')} {row.verdict}" if row.verdict else "—"
    findings = "<br>".join(f"{md(f['rule_id'], 20)} {md(f['severity'], 10)}: {md(f['message'], 120)}"
                           for f in row.findings) or (md(row.error, 200) if row.error else "—")
    report = f"[{md(row.report, 200)}]({_link(row.report)})" if row.report else "—"
    name = md(row.batch_target.display, 200)
    score = str(row.score) if row.score is not None else "—"
    return f"| {name} | {row.state} | {verdict} | {score} | {findings} | {report} |"


def _link(path: str) -> str:
    """A relative link; the path is made of safe components already (report_paths), `(`/`)`/spaces encoded."""
    return path.replace("%", "%25").replace(" ", "%20").replace("(", "%28").replace(")", "%29")


def write_summary(out: Path, rows: list[Row], fail_on: str) -> BatchExit:
    document = summary_document(rows, fail_on)
    text = escape_json_text(json.dumps(document, indent=2, ensure_ascii=False)) + "\n"
    write_whole(out / "summary.json", text)  # each written beside and renamed: a kill leaves the earlier one whole
    write_whole(out / "summary.md", summary_markdown(rows, fail_on))
    write_whole(out / "summary.html", summary_html(rows))
    return batch_exit(rows, fail_on)
