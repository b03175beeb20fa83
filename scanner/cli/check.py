"""`mcp-sandbox check FILE`: lint a saved tools/list result offline and report a score and a verdict.

The rules, the report model and the config are imported when the command runs, so that building the app (for
`--version`, `--help` or another command) does not load them."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

import typer

from scanner.cli.options import config_option, fail_under_option, with_report_options
from scanner.cli.output import ReportOutputs, check_outputs, emit_report, finish
from scanner.errors import UsageError
from sandbox.core.untrusted import cap_text

if TYPE_CHECKING:
    from scanner.config import Config
    from scanner.report.locations import Artifact
    from scanner.report.model import Finding, Report
    from scanner.tools_file import ToolsFile

STDIN_ARTIFACT = "stdin"


def build_report(path: Path, parsed: ToolsFile, config: Config) -> Report:
    """Lint the parsed file into a complete Report (findings, those the config suppressed, score, verdict)."""
    from scanner.json_input import is_stdin
    from scanner.report.model import Report, ServerInfo, Skipped, TargetInfo
    from scanner.report.score import compute
    from scanner.rules.static.context import build_context
    from scanner.rules.static.engine import run_context
    from sandbox.core.untrusted import cap_json

    context = build_context(parsed.tools, parsed.prompts, parsed.instructions, parsed.server_info,
                            payload_bytes=parsed.payload_bytes, resources=parsed.resources,
                            resource_templates=parsed.resource_templates)
    findings = run_context(context)  # a saved report's own findings are carried over beside these
    info = parsed.server_info
    server = ServerInfo(
        name=cap_text(info["name"], 256) if isinstance(info.get("name"), str) else None,
        version=cap_text(info["version"], 256) if isinstance(info.get("version"), str) else None,
        protocol_version=cap_text(parsed.protocol_version, 64) if parsed.protocol_version else None,
        instructions=cap_text(parsed.instructions) if parsed.instructions else None,
    )
    report = Report(
        target=TargetInfo(kind="file", name=STDIN_ARTIFACT if is_stdin(path) else path.name, requested=str(path)),
        findings=findings,
        server=server,
        tools=[t if isinstance(t, dict) else {"invalid": t} for t in cap_json(parsed.tools)],
        prompts=[p if isinstance(p, dict) else {"invalid": p} for p in cap_json(parsed.prompts)],
        resources=[r if isinstance(r, dict) else {"invalid": r} for r in cap_json(parsed.resources)],
        resource_templates=[r if isinstance(r, dict) else {"invalid": r} for r in cap_json(parsed.resource_templates)],
    )
    unread = _unread_listing(parsed.report)
    if unread is not None:
        report.status, report.skipped = "incomplete", [Skipped(stage="listing", reason=unread),
                                                       Skipped(stage="lint", reason="the tools were not listed")]
    if parsed.report is not None:
        _carry_over(parsed.report, report, keep_status=unread is None)
    config.apply_to(report)
    report.score, report.verdict = compute(report.findings, parsed.tools, status=report.status,
                                           tool_tokens=[view.json_tokens for view in context.tools])
    return report


def _unread_listing(saved: Report | None) -> str | None:
    """Why a saved report holds no tools, when its scan did not read them (an empty listing is not "no findings")."""
    if saved is None or saved.tools or (saved.status == "complete" and not saved.errors):
        return None
    why = [f"{r.stage} skipped ({r.reason})" for r in saved.skipped if not r.chosen] or saved.errors
    return cap_text(f"the saved report's scan listed no tools: {why[0] if why else saved.status}", 500)


def _carry_over(saved: Report, report: Report, *, keep_status: bool) -> None:
    """What `check` cannot re-derive from a saved report's definitions, taken from the saved report so that its
    verdict and exit code are the scan's: every finding of the scan that this run's lint did not find again (those it
    suppressed too, for this run's config to weigh again): the other stages' (probes, behaviour, provenance, source,
    conformance), and static rules' ones on what the report does not hold as linted (a definition re-listed after
    the first calls or served to a second client, a tool the listing rejected, text past a cut); and, for a scan that
    did not complete (keep_status: its tools were listed, else the caller says why they were not), its status,
    skipped stages and errors."""
    from scanner.report.model import Finding

    linted = {(f.rule_id, f.tool, f.message) for f in report.findings}
    for finding in [*saved.findings, *saved.suppressed]:
        if (finding.rule_id, finding.tool, finding.message) not in linted:
            report.findings.append(_inert(Finding.model_validate(finding.model_dump(exclude={"suppression"}))))
    if keep_status and saved.status != "complete":
        report.status, report.skipped, report.errors = saved.status, list(saved.skipped), list(saved.errors)


def _inert(finding: Finding) -> Finding:
    """A saved report's finding with the text the views print as the rule catalogue's, unescaped (its rule id, name
    and fix), made visible and capped: a hand-edited report is untrusted, and its `rule_id` could clear the screen."""
    from sandbox.core.untrusted import escape_for_terminal

    return finding.model_copy(update={"rule_id": escape_for_terminal(finding.rule_id, 40),
                                      "rule_name": escape_for_terminal(finding.rule_name, 120),
                                      "fix": escape_for_terminal(finding.fix, 500)})


def tools_file_artifact(path: Path, parsed: ToolsFile, with_lines: bool) -> Artifact:
    """The checked file, and the line of each tool's `"name"` in it (found only when an output uses lines)."""
    from scanner.json_input import is_stdin
    from scanner.report.locations import Artifact, file_artifact, tool_lines

    if is_stdin(path):
        return Artifact(uri=STDIN_ARTIFACT)
    return file_artifact(str(path), tool_lines(parsed.text) if with_lines else None)


def _explain(name: str) -> None:
    from scanner.rules.docs import explain
    from scanner.rules.registry import lookup

    rule = lookup(name)
    if rule is None:
        raise UsageError(f"unknown rule {name!r}; run `mcp-sandbox rules` to list every rule's id and name")
    print(explain(rule), end="")
    raise typer.Exit(0)


@with_report_options
def check(
    file: Path | None = typer.Argument(None, metavar="FILE", help="A saved tools/list result (JSON), a bare array "
                                       "of tools, or a saved mcp-sandbox JSON report; - reads standard input."),
    outputs: ReportOutputs = ReportOutputs(),
    fail_under: int | None = fail_under_option(),
    explain_rule: str | None = typer.Option(None, "--explain", metavar="RULE", help="Print a rule's docs and exit."),
    config_path: Path | None = config_option(),
) -> None:
    """Lint a saved tools/list offline: rules S1-S14, a token-weighted score and a verdict.

    Exit codes: 0 nothing at or above --fail-on; 1 a finding at or above it (or the score under --fail-under); 2 bad
    input; 3 a saved report whose scan did not complete. The last line on stderr says why."""
    if explain_rule is not None:
        _explain(explain_rule)
    if file is None:
        raise UsageError("give a tools/list JSON FILE to check (- for standard input), or --explain RULE")
    check_outputs(outputs, inputs=[file, config_path], fail_under=fail_under)
    from scanner.config import load
    from scanner.tools_file import load_tools_file

    config = load(config_path)
    parsed = load_tools_file(file)
    report = build_report(file, parsed, config)
    with_lines = bool(outputs.sarif or outputs.annotations)
    emit_report(report, outputs, tools_file_artifact(file, parsed, with_lines))
    raise typer.Exit(finish(report, outputs, fail_under))


def register(app: typer.Typer) -> None:
    app.command("check")(check)
