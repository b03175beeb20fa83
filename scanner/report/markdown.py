"""Markdown view of a Report, for a pull-request comment or a CI job summary.

Untrusted text is escaped for Markdown and HTML (no hidden comments, no raw tags, no @-mentions, autolinks, issue
links or emoji codes) and capped so the comment stays under the 65,536-character limit of common forges."""

from __future__ import annotations

import re

from scanner.provenance.model import OUTCOME_LABELS
from scanner.report.markdown_text import inert
from scanner.report.containment import containment_rows, notification_rows, notification_total
from scanner.report.model import Finding, Report, process_summary
from scanner.report.score import security_share
from scanner.report.severity import most_severe_first
from scanner.report.suppressions import config_label, plural, refused_lines, suppressed_lines
from scanner.report.target_view import LOOKS
from sandbox.core.untrusted import escape_for_terminal

MAX_ROWS = 200
MAX_CHARS = 60_000
VERDICT_ICON = {"block": "⛔", "review": "⚠️", "pass": "✅", "incomplete": "❔"}


def md(text: str | None, limit: int = 300) -> str:
    """Untrusted text made inert in Markdown and HTML: visible escapes, entities, escaped punctuation, and no mention,
    autolink, issue link or emoji code (markdown_text.inert): a zero-width space breaks each, as Renovate does for
    `@` (an entity for `@` itself is decoded to `@` before GitHub looks for mentions, so `&#64;team` could still ping
    a team; `@` then an invisible space cannot). The text shows the same characters as written."""
    return inert(escape_for_terminal(text or "", limit=limit))


def code(text: str, limit: int = 300) -> str:
    """Untrusted text as an inline code span (outside tables): nothing inside one is Markdown, HTML or a mention, so
    it is shown as is (md()'s backslashes and entities would show literally); the fence is one backtick longer than
    any run of backticks in it, with a space either side so a backtick at an end cannot join the fence."""
    visible = escape_for_terminal(text, limit=limit)
    fence = "`" * (max((len(run) for run in re.findall("`+", visible)), default=0) + 1)
    return f"{fence} {visible} {fence}"


def _finding_row(finding: Finding) -> str:
    tool = "(server)" if finding.tool is None else md(finding.tool, 120)
    evidence = f"<br>evidence: {md(finding.evidence, 160)}" if finding.evidence else ""
    return (f"| {finding.severity} | {finding.rule_id} {finding.rule_name} | {tool} | {md(finding.message)}"
            f"{evidence} |")


def _counted(count: int, noun: str) -> str:
    """`**1** error`, `**2** errors` (info is not counted in the plural)."""
    return f"**{count}** {noun}" + ("" if count == 1 or noun == "info" else "s")


def _status_lines(report: Report) -> list[str]:
    """The scan's status, and each stage it skipped with why (a choice such as --no-probes says so)."""
    if report.status == "complete" and not report.skipped:
        return []
    note = "" if report.status == "complete" else ": what it did not see is not evidence of safety"
    lines = ["", f"**Scan {report.status}**{note}"]
    lines += [f"- {record.stage} skipped{' (your choice)' if record.chosen else ''}: {md(record.reason, 500)}"
              for record in report.skipped[:MAX_ROWS]]
    return lines


def _friendliness(report: Report) -> list[str]:
    """The agent-friendliness score, in its own paragraph: a token cost, not a security measure."""
    score = report.score
    if score is None:
        return ["", "Agent-friendliness: not scored (the tools were not listed)."]
    return ["", f"Agent-friendliness **{score.value}/100** — the token cost to an agent, not a security measure "
                f"(~{score.tokens:,} tokens of definitions, ~{score.wasted_tokens:,} wasted per session; "
                f"{md(score.estimate)})"]


def _summary(report: Report) -> list[str]:
    verdict = report.verdict or "unknown"
    counts = {s: sum(1 for f in report.findings if f.severity == s) for s in ("error", "warning", "info")}
    share = security_share(report.findings)
    lines = [f"## {VERDICT_ICON.get(verdict, '')} mcp-sandbox: **{verdict.upper()}** — {md(report.target.requested)}",
             "",
             "Findings: " + " · ".join(_counted(counts[level], level) for level in ("error", "warning", "info"))
             + (f" ({share})" if share else "")
             + (f" · **{len(report.suppressed)}** suppressed by config" if report.suppressed else "")]
    launch = report.target.launch
    if launch is not None:
        lines += ["", f"Mapped from the launch command: {md(launch.runner)} {md(launch.package)}"]
    if report.target.remote is not None:
        lines += ["", "**NOT sandboxed**: a remote server (Streamable HTTP); nothing contained or observed it. "
                  f"Endpoint sha256 `{report.target.remote.endpoint_sha256}`."]
    image = report.target.image
    if image is not None:
        lines += ["", f"Container image {code(image.reference)}, digest {code(image.digest)}"
                  + ("" if image.pinned else " (not pinned)") + "."]
        lines += ["", f"**Appears to need root**: {md(image.needs_root)}"] if image.needs_root else []
        lines += ["", f"**Looks into the sandbox**: {LOOKS}."]
    lines += _status_lines(report) + _friendliness(report)
    server = report.server
    if server.name or server.version:
        lines += ["", f"Server: {md(server.name)} {md(server.version)} · {len(report.tools)} tools"]
    lines += _sandbox_lines(report)
    if report.errors:
        lines += ["", "**Errors**", ""] + [f"- {md(e)}" for e in report.errors]
    return lines


def _sandbox_lines(report: Report) -> list[str]:
    """How the server ended, the processes teardown found, and failed snapshots: one line each, when there are any."""
    sandbox = report.sandbox
    teardown = sandbox.teardown if sandbox is not None else None
    lines = []
    if teardown is not None and teardown.server_ending is not None:
        lines.append(f"- Teardown: the server {md(teardown.server_ending.describe())} · processes found: "
                     f"{md(process_summary(teardown.processes))}")
    if sandbox is not None and any(p.role == "daemon" for p in sandbox.startup_processes):
        lines.append(f"- Start-up processes: {md(process_summary(sandbox.startup_processes))}")
    failed = [record for record in report.behavior if record.snapshot != "ok"]
    if failed:
        lines.append(f"- Failed snapshots: {len(failed)} (no file changes derived from them): {md(failed[0].snapshot)}")
    return ["", *lines] if lines else []


def _findings_table(report: Report) -> list[str]:
    if not report.findings:
        return ["", "No findings."]
    ordered = sorted(report.findings, key=lambda f: (most_severe_first(f.severity), f.tool or "", f.rule_id))
    lines = ["", "| severity | rule | tool | finding |", "| --- | --- | --- | --- |"]
    lines += [_finding_row(f) for f in ordered[:MAX_ROWS]]
    if len(ordered) > MAX_ROWS:
        lines += ["", f"…and {len(ordered) - MAX_ROWS} more findings (see the JSON or SARIF report)."]
    return lines


def _config_section(report: Report) -> list[str]:
    """The config in use, what it suppressed (a line per rule and entry, with counts) and what it was refused."""
    if report.config is None:
        return []
    suppressed = suppressed_lines(report)
    lines = ["", f"**Config** {md(config_label(report), 500)}: suppressed {plural(len(report.suppressed), 'finding')}"
             " (listed in the JSON and SARIF reports; not counted in the verdict)", ""]
    lines += [f"- suppressed {line.rule_id} {line.rule_name} ×{line.count} by {md(line.entry, 240)}"
              for line in suppressed[:MAX_ROWS]]
    lines += [f"- ⚠️ **not suppressed** {line.rule_id} {line.rule_name} ×{line.count} by {md(line.entry, 240)}: "
              f"{md(line.reason, 500)}" for line in refused_lines(report)[:MAX_ROWS]]
    lines += [f"- ⚠️ **matched nothing** {md(entry, 240)}: names no tool the server lists (a typo?)"
              for entry in report.config.unmatched[:MAX_ROWS]]
    return lines


def _score_table(report: Report) -> list[str]:
    if report.score is None or not report.score.tools:
        return []
    worst = sorted(report.score.tools, key=lambda t: (t.score, t.tool))[:20]
    lines = ["", "<details><summary>Lowest-scoring tools</summary>", "", "| tool | score | tokens | wasted |",
             "| --- | ---: | ---: | ---: |"]
    lines += [f"| {md(t.tool, 120)} | {t.score} | {t.tokens:,} | {t.wasted_tokens:,} |" for t in worst]
    return lines + ["", "</details>"]


def _provenance_table(report: Report) -> list[str]:
    """Every provenance check with its outcome: "not checked" is spelled out, never folded into a pass."""
    provenance = report.provenance
    if provenance is None or not provenance.packages:
        return []
    lines = ["", "<details><summary>Provenance</summary>", "", "| package | check | outcome | evidence |",
             "| --- | --- | --- | --- |"]
    for package in provenance.packages:
        label = md(f"{package.name}@{package.version or '?'}", 120)
        lines += [f"| {label} | {md(c.name, 40)} | {OUTCOME_LABELS[c.outcome]} | {md(c.evidence, 300)} |"
                  for c in package.checks[:MAX_ROWS]]
    return lines + ["", "</details>"]


def _containment_section(report: Report) -> list[str]:
    """The egress sink's own applied policy and the server's network namespace, a line each."""
    rows = containment_rows(report)
    return ["", "**Containment** (read back from the engine and the server's namespace)", ""] + [
        f"- {label}: {md(text, 600)}" for label, text in rows] if rows else []


def _notifications_section(report: Report) -> list[str]:
    """Server notifications by method, with the first one's params (escaped, capped)."""
    shown, more = notification_rows(report)
    if not shown:
        return []
    lines = ["", f"**Notifications** ({plural(notification_total(report), 'notification')} from the server)", ""]
    lines += [f"- {md(seen.method, 200)} ×{seen.count}" + (f": {md(seen.first_params, 160)}" if seen.first_params
                                                             else "") for seen in shown]
    return lines + ([f"- …and {plural(more, 'more method')} (see the JSON report)"] if more else [])


def to_markdown(report: Report) -> str:
    """The whole Markdown document, capped in size."""
    sections = (_summary(report) + _findings_table(report) + _config_section(report) + _provenance_table(report)
                + _containment_section(report) + _notifications_section(report) + _score_table(report))
    text = "\n".join(sections) + "\n"
    if len(text) > MAX_CHARS:
        cut = text[:MAX_CHARS].rsplit("\n", 1)[0]
        # A cut inside a collapsed section closes it: else the note, and whatever a caller appends (the Action's
        # lock section), would be folded away inside it.
        opened = cut.count("<details>") - cut.count("</details>")
        text = cut + "\n\n</details>" * opened + "\n\n…report cut to fit a comment; see the JSON or SARIF report.\n"
    return text
