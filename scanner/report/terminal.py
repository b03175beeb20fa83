"""Terminal view of a Report with rich. Untrusted text is escaped and always placed in Text objects, never markup."""

from __future__ import annotations

from typing import Any

from rich.console import Console, Group, RenderableType
from rich.panel import Panel
from rich.table import Table
from rich.text import Text

from scanner.report.containment import containment_rows, notification_rows, notification_total
from scanner.report.target_view import origin_rows
from scanner.report.terminal_plain import print_section
from scanner.report.model import Finding, Report, process_summary
from scanner.report.score import security_share
from scanner.report.severity import Severity, at_least, counts, most_severe_first
from scanner.report.suppressions import SuppressionLine, config_label, plural, refused_lines, suppressed_lines
from sandbox.core.untrusted import escape_for_terminal

SEVERITY_STYLE = {"error": "bold red", "warning": "yellow", "info": "cyan"}
VERDICT_STYLE = {"block": "bold white on red", "review": "bold black on yellow", "pass": "bold white on green",
                 "incomplete": "bold white on magenta"}
SERVER_GROUP = "(server)"
MAX_SCORE_ROWS = 25
MAX_TOOL_ROWS = 50
MAX_PROBE_ROWS = 60
MAX_UNMATCHED = 20  # config entries that matched nothing, listed in the terminal (the JSON has them all)
STATUS_STYLE = {"ok": "green", "tool_error": "yellow", "protocol_error": "yellow", "timeout": "bold red",
                "crashed": "bold red"}


def safe(value: Any, limit: int = 2_000) -> Text:
    """Untrusted value as a Text with every control/invisible character shown as a visible escape."""
    text = "" if value is None else str(value)
    # Printable ASCII within the limit is its own escape: skip the per-character pass (most names and messages).
    return Text(text if len(text) <= limit and text.isascii() and text.isprintable()
                else escape_for_terminal(text, limit=limit))


def _kv_table(title: str, rows: list[tuple[str, Any]]) -> Table:
    table = Table(title=title, show_header=False, title_justify="left", box=None, pad_edge=False)
    table.add_column(style="bold")
    table.add_column()
    for key, value in rows:
        table.add_row(key, safe(value))
    return table


def _target(report: Report) -> RenderableType:
    target = report.target
    rows = [("target", target.requested), ("kind", target.kind), ("name", target.name)]
    rows += origin_rows(target)
    if target.version:
        rows.append(("version", target.version))
    rows.append(("scanner", f"{report.scanner.name} {report.scanner.version}"))
    return _kv_table("Target", rows)


def _server(report: Report) -> RenderableType | None:
    server = report.server
    rows = [(k, v) for k, v in (("name", server.name), ("version", server.version),
                                ("protocol", server.protocol_version)) if v]
    if server.capabilities:
        rows.append(("capabilities", ", ".join(sorted(server.capabilities))))
    if server.instructions:
        rows.append(("instructions", server.instructions))
    return _kv_table("Server", rows) if rows else None


def _tools(report: Report) -> RenderableType | None:
    if not report.tools and not report.prompts and not report.resources and not report.resource_templates:
        return None
    table = Table(title=f"Tools ({len(report.tools)})", title_justify="left")
    table.add_column("name")
    table.add_column("title")
    table.add_column("description", overflow="fold")
    for tool in report.tools[:MAX_TOOL_ROWS]:
        name = tool.get("name") if isinstance(tool, dict) else tool
        title = tool.get("title", "") if isinstance(tool, dict) else ""
        description = tool.get("description", "") if isinstance(tool, dict) else ""
        table.add_row(safe(name, 200), safe(title, 200), safe(description, 160))
    more = len(report.tools) - MAX_TOOL_ROWS
    counts = Text((f"… {more} more tools (see --json)\n" if more > 0 else "") + f"prompts: {len(report.prompts)}  resources: {len(report.resources)}  "
                  f"resource templates: {len(report.resource_templates)}", style="dim")
    return Group(table, counts)


INSTALLER_TAIL_LINES = 6
OUTCOME_STYLE = {"verified": "green", "absent": "yellow", "unavailable": "yellow", "failed": "bold red"}
OUTCOME_LABEL = {"verified": "verified", "absent": "absent", "unavailable": "not checked", "failed": "FAILED"}


def _provenance(report: Report) -> RenderableType | None:
    """One row per check: `unavailable` reads "not checked", never as a pass."""
    provenance = report.provenance
    if provenance is None:
        return None
    table = Table(title="Provenance", title_justify="left", show_header=True, header_style="bold")
    for column in ("package", "check", "outcome", "evidence"):
        table.add_column(column, overflow="fold")
    for package in provenance.packages:
        label = f"{package.name}@{package.version or '?'}"
        for check in package.checks:
            table.add_row(safe(label, 120), safe(check.name, 40),
                          Text(OUTCOME_LABEL[check.outcome], style=OUTCOME_STYLE[check.outcome]),
                          safe(check.evidence, 160))
    tree = provenance.dependency_tree
    if tree is not None:
        scripts = len(tree.with_install_scripts)
        table.add_row(safe(report.target.name, 120), "dependency tree", Text(f"{tree.total} packages"),
                      safe(f"{scripts} with install scripts, {len(tree.non_registry)} from git/URL", 160))
    return table


def _probes(report: Report) -> RenderableType | None:
    """One row per probe call: tool, label, status, ~tokens, latency; what the call did, when it did anything."""
    if not report.probes:
        return None
    behaviour = {record.call: record for record in report.behavior}
    table = Table(title=f"Probes ({len(report.probes)} calls)", title_justify="left")
    for column, justify in (("tool", "left"), ("label", "left"), ("status", "left"), ("~tokens", "right"),
                            ("latency", "right"), ("seen", "left")):
        table.add_column(column, justify=justify)  # type: ignore[arg-type]
    for index, probe in enumerate(report.probes[:MAX_PROBE_ROWS]):
        table.add_row(safe(probe.tool, 80), safe(probe.label, 80), Text(probe.status, style=STATUS_STYLE.get(
            probe.status, "")), f"{probe.tokens:,}", f"{probe.latency_ms / 1000:.2f} s",
            safe(_seen(behaviour.get(index)), 120))
    more = len(report.probes) - MAX_PROBE_ROWS
    return Group(table, Text(f"  … {more} more calls (see --json)", style="dim")) if more > 0 else table


def _seen(record: Any) -> str:
    if record is None:
        return ""
    parts = [] if record.snapshot == "ok" else ["snapshot failed"]
    files = record.files
    for label, paths in (("created", files.created), ("modified", files.modified), ("deleted", files.deleted)):
        if paths:
            parts.append(f"{label} {len(paths)}")
    if record.canaries:
        parts.append("canary " + ",".join(sorted({event.how for event in record.canaries})))
    if record.processes:
        parts.append(f"{len(record.processes)} procs left")
    if record.egress:
        parts.append(f"{len(record.egress)} egress")
    resources = record.resources
    if resources.oom_killed:
        parts.append("OOM")
    if resources.pids_limit_hit:
        parts.append("pids limit")
    return ", ".join(parts)


def _install(report: Report) -> RenderableType | None:
    install = report.install
    if install is None:
        return None
    rows: list[tuple[str, Any]] = [
        ("image", install.image), ("image id", install.image_id), ("runtime", install.runtime_image),
        ("cached", install.cached), ("command", " ".join(install.command)), ("seconds", f"{install.seconds:.1f}"),
    ]
    if install.attribution_note:
        rows.append(("install egress", install.attribution_note))
    if install.installer_output:
        tail = install.installer_output.strip().splitlines()[-INSTALLER_TAIL_LINES:]
        rows.append(("installer output", "\n".join(tail)))
    return _kv_table("Install", rows)


def _sandbox(report: Report) -> list[RenderableType]:
    sandbox = report.sandbox
    if sandbox is None:
        return []
    parts: list[RenderableType] = []
    rows: list[tuple[str, Any]] = [("session", sandbox.session), ("exit code", sandbox.exit_code)]
    if sandbox.startup_processes:
        rows.append(("start-up processes", process_summary(sandbox.startup_processes)))
    failed = [record for record in report.behavior if record.snapshot != "ok"]
    if failed:
        rows.append(("failed snapshots", f"{len(failed)} (no file changes derived): {failed[0].snapshot}"))
    if sandbox.stderr:
        rows.append(("stderr" + (" (truncated)" if sandbox.stderr_truncated else ""), sandbox.stderr))
    parts.append(_kv_table("Sandbox", rows))
    if sandbox.applied is not None:
        parts.append(_kv_table("Sandbox policy (applied)", [
            (key, ", ".join(map(str, value)) if isinstance(value, list)
             else ", ".join(f"{k}={v}" for k, v in value.items()) if isinstance(value, dict) else value)
            for key, value in sandbox.applied.as_dict().items()]))
    if sandbox.teardown is not None:
        teardown = sandbox.teardown
        parts.append(_kv_table("Teardown", [
            ("complete", teardown.complete), ("seconds", f"{teardown.seconds:.1f}"),
            ("removed", ", ".join(teardown.removed) or "-"), ("leftovers", ", ".join(teardown.leftovers) or "none"),
            *([("server ended", teardown.server_ending.describe())] if teardown.server_ending else []),
            *([("processes found", process_summary(teardown.processes))] if teardown.processes else [])]))
    return parts


def _containment(report: Report) -> RenderableType | None:
    """The egress sink's own applied policy and the server's network namespace: containment shown, not inferred."""
    rows = containment_rows(report)
    return _kv_table("Containment (read back)", list(rows)) if rows else None


def _notifications(report: Report) -> RenderableType | None:
    """Server notifications by method: the count and the first one's params (escaped, capped), most frequent first."""
    shown, more = notification_rows(report)
    if not shown:
        return None
    lines = [Text(f"Notifications ({plural(notification_total(report), 'notification')})", style="bold")]
    for seen in shown:
        line = Text("  ") + safe(seen.method, 200) + Text(f" ×{seen.count}", style="bold")
        lines.append(line + (Text("  first params: ", style="dim") + safe(seen.first_params, 160)
                             if seen.first_params else Text("")))
    if more:
        lines.append(Text(f"  … {plural(more, 'more method')} (see --json)", style="dim"))
    return Group(*lines)


def _timings(report: Report) -> RenderableType | None:
    rows = [(k, f"{v:.2f} s") for k, v in report.timings.model_dump().items() if v is not None]
    return _kv_table("Timings", rows) if rows else None


def _skipped(report: Report) -> RenderableType | None:
    """Each stage that did not run or finish, and why; a choice (--no-probes) is shown as one, dim."""
    if not report.skipped:
        return None
    lines: list[RenderableType] = [Text(f"Status: {report.status}", style="bold" if report.status == "complete"
                                        else "bold magenta")]
    for record in report.skipped:
        line = Text(f"  {record.stage} skipped: ", style="dim" if record.chosen else "magenta")
        lines.append(line + safe(record.reason, 500))
    return Group(*lines)


def _errors(report: Report) -> RenderableType | None:
    if not report.errors:
        return None
    return Group(Text("Errors", style="bold red"), *(Text("  • ") + safe(e) for e in report.errors))


def _finding_lines(finding: Finding, fixes_shown: set[tuple[str, str]]) -> list[Text]:
    """A finding's line, its evidence unless the message already quotes it, and its fix hint the first time that
    rule's hint appears (later ones would repeat it word for word)."""
    head = Text("  ")
    head.append(f"{finding.severity:<7}", style=SEVERITY_STYLE[finding.severity])
    head.append(f" {finding.rule_id} {finding.rule_name}: ", style="bold")
    head.append_text(safe(finding.message, 500))
    lines = [head]
    if finding.evidence and finding.evidence not in finding.message:
        lines.append(Text("      evidence: ", style="dim") + safe(finding.evidence, 300))
    if finding.fix and (finding.rule_id, finding.fix) not in fixes_shown:
        fixes_shown.add((finding.rule_id, finding.fix))
        lines.append(Text(f"      fix: {finding.fix}", style="italic dim"))
    return lines


def _findings(report: Report, min_severity: Severity) -> RenderableType:
    shown = [f for f in report.findings if at_least(f.severity, min_severity)]
    groups: dict[str, list[Finding]] = {}
    for finding in shown:
        groups.setdefault(SERVER_GROUP if finding.tool is None else finding.tool, []).append(finding)
    hidden = len(report.findings) - len(shown)
    title = Text(f"Findings ({len(shown)} shown" + (f", {hidden} below {min_severity} hidden)" if hidden else ")"),
                 style="bold")
    parts: list[RenderableType] = [title]
    if not shown:
        parts.append(Text("  none", style="green"))
    order = sorted(groups, key=lambda g: (g != SERVER_GROUP,))
    fixes_shown: set[tuple[str, str]] = set()
    for group in order:
        parts.append(Text(SERVER_GROUP, style="bold magenta") if group == SERVER_GROUP
                     else Text("tool ", style="bold magenta") + safe(group, 200))
        for finding in sorted(groups[group], key=lambda f: most_severe_first(f.severity)):
            parts.extend(_finding_lines(finding, fixes_shown))
    return Group(*parts)


def _suppression_line(line: SuppressionLine, verb: str, style: str) -> Text:
    text = Text(f"  {verb} ", style=style)
    text.append(f"{line.rule_id} {line.rule_name}".rstrip(), style="bold")
    text.append(f" ×{line.count} by ")
    return text + safe(line.entry, 240)


def _config(report: Report) -> RenderableType | None:
    """The config file in use, a line per rule it suppressed (with counts), and every suppression it was refused."""
    if report.config is None:
        return None
    parts: list[RenderableType] = [Text("Config ", style="bold") + safe(config_label(report), 500)]
    suppressed = suppressed_lines(report)
    parts += [_suppression_line(line, "suppressed", "dim") for line in suppressed]
    if not suppressed:
        parts.append(Text("  suppressed nothing", style="dim"))
    for line in refused_lines(report):
        parts.append(_suppression_line(line, "NOT suppressed", "bold yellow"))
        parts.append(Text("      ", style="dim") + safe(line.reason, 500))
    unmatched = report.config.unmatched
    parts += [Text("  matched nothing ", style="bold yellow") + safe(entry, 240)
              + Text(": names no tool the server lists (a typo?)", style="dim") for entry in unmatched[:MAX_UNMATCHED]]
    if len(unmatched) > MAX_UNMATCHED:
        parts.append(Text(f"  …and {len(unmatched) - MAX_UNMATCHED} more entries that matched nothing (see the JSON "
                          "report)", style="dim"))
    return Group(*parts)


def _score(report: Report) -> RenderableType | None:
    """Agent-friendliness: the token cost of the definitions to an agent, worst tools first (not a security measure)."""
    score = report.score
    if score is None:
        return None
    title = Text(f"Agent-friendliness {score.value}/100", style="bold")
    title += Text(f"  token cost to an agent, not security: ~{score.tokens:,} tokens of definitions, "
                  f"~{score.wasted_tokens:,} wasted per session (estimate: ", style="dim")
    title += safe(score.estimate, 100) + Text(")", style="dim")
    table = Table(title_justify="left")
    table.add_column("tool")
    table.add_column("score", justify="right")
    table.add_column("tokens", justify="right")
    table.add_column("wasted", justify="right")
    worst = sorted(score.tools, key=lambda t: (t.score, t.tool))
    for tool in worst[:MAX_SCORE_ROWS]:
        table.add_row(safe(tool.tool, 200), str(tool.score), f"{tool.tokens:,}", f"{tool.wasted_tokens:,}")
    more = len(worst) - MAX_SCORE_ROWS
    return Group(title, table, *([Text(f"  … {more} more tools (see --json)", style="dim")] if more > 0 else []))


def finding_counts(report: Report) -> str:
    """`1 error, 2 warnings, 0 info` over the findings that count."""
    seen = counts(f.severity for f in report.findings)
    return f"{plural(seen['error'], 'error')}, {plural(seen['warning'], 'warning')}, {seen['info']} info"


def _verdict(report: Report) -> RenderableType:
    """The security verdict with the scan's status; the agent-friendliness score apart from it, under the panel."""
    verdict = report.verdict or "unknown"
    body = Text(f" {verdict.upper()} ", style=VERDICT_STYLE.get(verdict, "bold"))
    body.append(f"  {finding_counts(report)}")
    note = security_share(report.findings)
    if note:
        body.append(f" ({note})", style="dim")
    if report.suppressed:
        body.append(f" ({plural(len(report.suppressed), 'finding')} suppressed by config, not counted)")
    gaps = [record for record in report.skipped if not record.chosen]
    if report.status != "complete":
        body.append(f"\nscan {report.status}: ", style="bold magenta")
        first = gaps[0] if gaps else None
        body.append_text(safe(f"{first.stage} skipped ({first.reason})" if first else
                              (report.errors[0] if report.errors else "see Errors"), 300))
        if len(gaps) > 1:
            body.append(f" (+{plural(len(gaps) - 1, 'more stage')} skipped)", style="dim")
    score = report.score
    friendliness = (Text(f"Agent-friendliness {score.value}/100 ", style="bold")
                    + Text("(token cost to an agent; not a security measure)", style="dim") if score is not None
                    else Text("Agent-friendliness: not scored (the tools were not listed)", style="dim"))
    return Group(Panel(body, title=Text("Security verdict"), expand=False), friendliness)


def renderables(report: Report, min_severity: Severity = Severity.INFO) -> list[RenderableType]:
    """Every section of the report, in reading order; sections with nothing to show are left out."""
    sections: list[RenderableType | None] = [
        _target(report), _server(report), _tools(report), _probes(report), _install(report), _provenance(report), *_sandbox(report),
        _containment(report), _notifications(report),
        _timings(report),
        _skipped(report), _errors(report), _findings(report, min_severity), _config(report), _score(report), _verdict(report),
    ]
    return [s for s in sections if s is not None]


def render(report: Report, console: Console, min_severity: Severity = Severity.INFO) -> None:
    """Print the report to a rich console."""
    for section in renderables(report, min_severity):
        print_section(console, section)
        console.print()
