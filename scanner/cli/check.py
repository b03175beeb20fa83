"""`mcp-sandbox check FILE`: lint a saved tools/list result offline and report a score and a verdict."""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Literal

import typer
from rich.console import Console

from scanner.config import Config, load
from scanner.errors import UsageError
from scanner.report.model import Finding, Report, ServerInfo, TargetInfo
from scanner.report.markdown import to_markdown
from scanner.report.sarif import artifact_uri_for, to_sarif
from scanner.report.severity import ASCENDING, FAIL_ON_LEVELS, meets_fail_on
from scanner.report.terminal import render
from scanner.rules.docs import explain
from scanner.rules.registry import lookup
from scanner.rules.static.engine import run_rules
from scanner.tools_file import ToolsFile, load_tools_file
from scanner.report.score import compute
from sandbox.core.untrusted import cap_json, cap_text

FailOn = Literal["info", "warning", "error", "never"]
FAIL_ON_CHOICES = FAIL_ON_LEVELS
SEVERITIES = ASCENDING
STDOUT = "-"


def build_report(path: Path, parsed: ToolsFile, config: Config) -> Report:
    """Lint the parsed file into a complete Report (findings, score, verdict)."""
    findings = run_rules(parsed.tools, parsed.prompts, parsed.instructions, parsed.server_info, config,
                         payload_bytes=parsed.payload_bytes)
    score, verdict = compute(findings, parsed.tools)
    info = parsed.server_info
    server = ServerInfo(
        name=cap_text(info["name"], 256) if isinstance(info.get("name"), str) else None,
        version=cap_text(info["version"], 256) if isinstance(info.get("version"), str) else None,
        protocol_version=cap_text(parsed.protocol_version, 64) if parsed.protocol_version else None,
        instructions=cap_text(parsed.instructions) if parsed.instructions else None,
    )
    return Report(
        target=TargetInfo(kind="file", name=path.name, requested=str(path)),
        verdict=verdict,
        score=score,
        findings=findings,
        server=server,
        tools=[t if isinstance(t, dict) else {"invalid": t} for t in cap_json(parsed.tools)],
        prompts=[p if isinstance(p, dict) else {"invalid": p} for p in cap_json(parsed.prompts)],
    )


def exit_code(findings: list[Finding], score: int | None, fail_on: str, fail_under: int | None) -> int:
    """1 when a finding is at or above fail_on, or the score is under fail_under; else 0."""
    if any(meets_fail_on(f.severity, fail_on) for f in findings):
        return 1
    if fail_under is not None and score is not None and score < fail_under:
        return 1
    return 0


def _write(target: str, text: str, what: str) -> None:
    if target == STDOUT:
        sys.stdout.write(text)
        return
    try:
        Path(target).write_text(text, encoding="utf-8")
    except OSError as exc:
        raise UsageError(f"cannot write the {what} report to {target}: {exc.strerror or exc}") from exc


def write_reports(report: Report, json_path: str | None, sarif_path: str | None, markdown_path: str | None,
                  artifact_uri: str | None = None) -> None:
    """Write the JSON, SARIF and Markdown views of the report that were asked for (`-` is stdout)."""
    if json_path:
        _write(json_path, report.model_dump_json(indent=2) + "\n", "JSON")
    if sarif_path:
        _write(sarif_path, json.dumps(to_sarif(report, artifact_uri), indent=2, ensure_ascii=False) + "\n", "SARIF")
    if markdown_path:
        _write(markdown_path, to_markdown(report), "Markdown")


def validate_flags(fail_on: str, min_severity: str, fail_under: int | None, outputs: list[str | None]) -> None:
    if fail_on not in FAIL_ON_CHOICES:
        raise UsageError(f"--fail-on must be one of {', '.join(FAIL_ON_CHOICES)}, not {fail_on!r}")
    if min_severity not in SEVERITIES:
        raise UsageError(f"--min-severity must be one of {', '.join(SEVERITIES)}, not {min_severity!r}")
    if fail_under is not None and not 0 <= fail_under <= 100:
        raise UsageError(f"--fail-under must be between 0 and 100, not {fail_under}")
    if sum(1 for o in outputs if o == STDOUT) > 1:
        raise UsageError("only one of --json/--sarif/--markdown can write to stdout (-)")


def check(
    file: Path | None = typer.Argument(None, help="A saved tools/list result (JSON), or a bare array of tools."),
    json_path: str | None = typer.Option(None, "--json", metavar="PATH", help="Write the JSON report (- for stdout)."),
    sarif_path: str | None = typer.Option(None, "--sarif", metavar="PATH", help="Write a SARIF 2.1.0 report."),
    markdown_path: str | None = typer.Option(None, "--markdown", metavar="PATH", help="Write a Markdown report."),
    fail_on: str = typer.Option("error", "--fail-on", help="Exit 1 on a finding at or above: info|warning|error|never."),
    fail_under: int | None = typer.Option(None, "--fail-under", help="Exit 1 when the score is under N (0-100)."),
    min_severity: str = typer.Option("info", "--min-severity", help="Show only findings at or above this in the "
                                     "terminal: info|warning|error."),
    explain_rule: str | None = typer.Option(None, "--explain", metavar="RULE", help="Print a rule's docs and exit."),
    config_path: Path | None = typer.Option(None, "--config", help="Config file (default: ./mcp-sandbox.toml or "
                                            "[tool.mcp-sandbox] in ./pyproject.toml)."),
) -> None:
    """Lint a saved tools/list offline: rules S1-S14, a token-weighted score and a verdict."""
    if explain_rule is not None:
        rule = lookup(explain_rule)
        if rule is None:
            raise UsageError(f"unknown rule {explain_rule!r}; run `mcp-sandbox rules` to list every rule's id and name")
        print(explain(rule), end="")
        raise typer.Exit(0)
    if file is None:
        raise UsageError("give a tools/list JSON FILE to check (or --explain RULE)")
    validate_flags(fail_on, min_severity, fail_under, [json_path, sarif_path, markdown_path])
    config = load(config_path)
    report = build_report(file, load_tools_file(file), config)
    to_stdout = STDOUT in (json_path, sarif_path, markdown_path)
    render(report, Console(stderr=to_stdout, highlight=False, soft_wrap=False), min_severity)  # type: ignore[arg-type]
    write_reports(report, json_path, sarif_path, markdown_path, artifact_uri_for(str(file)))
    raise typer.Exit(exit_code(report.findings, report.score.value if report.score else None, fail_on, fail_under))


def register(app: typer.Typer) -> None:
    app.command("check")(check)
