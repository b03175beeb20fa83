"""DIR/summary.html: the batch as one self-contained page (no external asset: inline CSS, inline SVG charts, a few
lines of inline script to sort the table), for a reviewer who would rather look than read.

Every piece of text from a target (its name, its findings, its error) is untrusted: HTML-escaped (quotes included)
and size-capped before it is written; a report link is only ever the store's relative path. The page's Content
Security Policy forbids loading anything from anywhere, so even a mistake here cannot make the page call out.
"""

from __future__ import annotations

import html
from collections import Counter

from scanner.batch.store import Row

MAX_ROWS = 20_000
MAX_TEXT = 300
BINS = 8
BAR_WIDTH, CHART_HEIGHT = 48, 120
VERDICT_COLOUR = {"pass": "#2e7d32", "review": "#f9a825", "block": "#c62828", "incomplete": "#757575"}
CSP = "default-src 'none'; style-src 'unsafe-inline'; script-src 'unsafe-inline'"
STYLE = ("body{font:14px system-ui,sans-serif;margin:2em}table{border-collapse:collapse;width:100%}"
         "th,td{border:1px solid #ccc;padding:4px 6px;text-align:left;vertical-align:top}"
         "th{cursor:pointer;background:#f3f3f3}svg{margin-right:2em}.charts{display:flex;flex-wrap:wrap}")
SORT_SCRIPT = """
document.querySelectorAll('th').forEach((th, column) => th.addEventListener('click', () => {
  const body = th.closest('table').tBodies[0], rows = Array.from(body.rows);
  const up = th.dataset.up !== '1'; th.dataset.up = up ? '1' : '0';
  const value = r => r.cells[column].dataset.sort ?? r.cells[column].textContent;
  rows.sort((a, b) => { const x = value(a), y = value(b), nx = parseFloat(x), ny = parseFloat(y);
    const c = (!isNaN(nx) && !isNaN(ny)) ? nx - ny : x.localeCompare(y); return up ? c : -c; });
  rows.forEach(r => body.appendChild(r));
}));
"""
COLUMNS = ("Target", "State", "Verdict", "Score", "Scan time (s)", "Top findings", "Report")


def text(value: object, limit: int = MAX_TEXT) -> str:
    """Untrusted text as HTML: capped, then escaped (quotes too, so it is safe in an attribute as well)."""
    raw = str(value)
    return html.escape(raw if len(raw) <= limit else raw[:limit] + "…", quote=True)


def summary_html(rows: list[Row], title: str = "mcp-sandbox batch") -> str:
    shown = rows[:MAX_ROWS]
    more = f"<p>{len(rows) - MAX_ROWS} more targets: see summary.json.</p>" if len(rows) > MAX_ROWS else ""
    header = "".join(f"<th>{name}</th>" for name in COLUMNS)
    body = "\n".join(_row(row) for row in shown)
    return (f"<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">"
            f"<meta http-equiv=\"Content-Security-Policy\" content=\"{CSP}\">"
            f"<title>{text(title)}</title><style>{STYLE}</style></head><body>\n<h1>{text(title)}</h1>\n"
            f"<p>{len(rows)} targets: {_counts(Counter(row.state for row in rows))}.</p>\n"
            f"<div class=\"charts\">{verdict_chart(rows)}{time_chart(rows)}</div>\n"
            f"<table id=\"targets\"><thead><tr>{header}</tr></thead><tbody>\n{body}\n</tbody></table>{more}\n"
            f"<script>{SORT_SCRIPT}</script></body></html>\n")


def _counts(counts: Counter[str]) -> str:
    return ", ".join(f"{n} {text(state)}" for state, n in sorted(counts.items())) or "none"


def _row(row: Row) -> str:
    verdict = row.verdict or ""
    colour = VERDICT_COLOUR.get(verdict, "#555")
    findings = "<br>".join(f"{text(f.get('rule_id', ''), 20)} {text(f.get('severity', ''), 10)}: "
                           f"{text(f.get('message', ''), 160)}" for f in row.findings)
    if not findings and row.error:
        findings = text(row.error)
    score = "" if row.score is None else str(int(row.score))
    seconds = "" if row.scan_seconds is None else f"{float(row.scan_seconds):.1f}"
    return (f"<tr><td>{text(row.batch_target.display)}</td><td>{text(row.state)}</td>"
            f"<td style=\"color:{colour}\">{text(verdict)}</td><td data-sort=\"{score or -1}\">{score}</td>"
            f"<td data-sort=\"{seconds or -1}\">{seconds}</td><td>{findings}</td><td>{_link(row.report)}</td></tr>")


def _link(report: str | None) -> str:
    """Only a relative path inside the batch directory becomes a link (never a scheme, never an absolute path)."""
    if not report or ":" in report or report.startswith(("/", "\\")) or ".." in report.split("/"):
        return text(report or "")
    return f"<a href=\"{text(report)}\">{text(report)}</a>"


def verdict_chart(rows: list[Row]) -> str:
    counts = Counter(row.verdict or "none" for row in rows if row.state == "done")
    bars = sorted(counts.items(), key=lambda item: list(VERDICT_COLOUR).index(item[0])
                  if item[0] in VERDICT_COLOUR else len(VERDICT_COLOUR))
    return _bars("Verdicts", [(text(label, 20), n, VERDICT_COLOUR.get(label, "#777")) for label, n in bars])


def time_chart(rows: list[Row]) -> str:
    times = [float(row.scan_seconds) for row in rows if row.scan_seconds is not None]
    if not times:
        return _bars("Scan time (s)", [])
    low, high = min(times), max(times)
    width = (high - low) / BINS or 1.0
    bins = Counter(min(BINS - 1, int((t - low) / width)) for t in times)
    return _bars("Scan time (s)", [(f"{low + i * width:.0f}", bins.get(i, 0), "#1565c0") for i in range(BINS)])


def _bars(title: str, bars: list[tuple[str, int, str]]) -> str:
    """A bar chart as inline SVG; labels are escaped by the caller."""
    peak = max((n for _, n, _ in bars), default=0) or 1
    width = max(1, len(bars)) * BAR_WIDTH + 20
    shapes = []
    for i, (label, n, colour) in enumerate(bars):
        height, x = round(CHART_HEIGHT * n / peak), 10 + i * BAR_WIDTH
        shapes.append(f"<rect x=\"{x}\" y=\"{20 + CHART_HEIGHT - height}\" width=\"{BAR_WIDTH - 8}\" "
                      f"height=\"{height}\" fill=\"{colour}\"><title>{label}: {n}</title></rect>"
                      f"<text x=\"{x}\" y=\"{CHART_HEIGHT + 36}\" font-size=\"11\">{label}</text>"
                      f"<text x=\"{x}\" y=\"{16 + CHART_HEIGHT - height}\" font-size=\"11\">{n}</text>")
    empty = "" if bars else "<text x=\"10\" y=\"60\" font-size=\"12\">no data yet</text>"
    return (f"<svg role=\"img\" aria-label=\"{text(title)}\" width=\"{width}\" height=\"{CHART_HEIGHT + 50}\">"
            f"<text x=\"10\" y=\"12\" font-size=\"12\" font-weight=\"bold\">{text(title)}</text>"
            f"{''.join(shapes)}{empty}</svg>")
