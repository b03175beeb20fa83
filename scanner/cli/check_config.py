"""`mcp-sandbox check-config FILE…`: lint the MCP servers of client configs before they are launched."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING

import typer

from scanner.cli.options import config_option, with_report_options
from scanner.cli.output import (STDOUT, ReportOutputs, at_or_above, check_outputs, exit_code,
                                print_annotations, write_json, write_text)
from scanner.errors import UsageError
from scanner.report.severity import ASCENDING, at_least
from sandbox.core.untrusted import escape_for_terminal

if TYPE_CHECKING:
    from rich.console import Console

    from scanner.config import Config
    from scanner.report.model import ConfigInfo, Finding, RefusedSuppression
    from scanner.provenance.config_lint import ConfigResult, ServerResult
    from scanner.report.locations import Artifact


def register(app: typer.Typer) -> None:
    app.command("check-config")(check_config)


@with_report_options
def check_config(
    files: list[Path] = typer.Argument(..., metavar="FILE", help="Client configs: claude_desktop_config.json, ~/.claude.json, "
                                                 ".mcp.json, ~/.cursor/mcp.json, .vscode/mcp.json …", show_default=False),
    outputs: ReportOutputs = ReportOutputs(),
    config_path: Path | None = config_option(),
) -> None:
    """Lint each MCP server of client configs: unpinned launches (I1), known-bad releases (I8), typosquats (I9).

    Environment values are never printed; remote servers show only scheme and host. A config's disable / ignore
    (--config, as for check and scan) suppresses findings the way it does there: shown, never counted.

    Exit codes: 0 nothing at or above --fail-on; 1 a finding at or above it; 2 bad input.
    """
    check_outputs(outputs, inputs=[*(path.expanduser() for path in files), config_path])
    from scanner.config import load

    config = load(config_path)
    from scanner.provenance.client_config import read_client_config  # loaded only when the command runs
    from scanner.provenance.config_lint import lint_config

    _refuse_overwriting_a_config(outputs, read_client_config)
    results = [lint_config(read_client_config(path.expanduser())) for path in files]
    info = _apply_config(config, results)
    findings = [f for r in results for s in r.servers for f in s.findings]
    console = outputs.terminal(soft_wrap=True)
    if console is not None:
        _print_terminal(console, [_filtered(r, outputs.min_severity) for r in results], findings)
        _print_config(console, info, results)
    _write_outputs(results, outputs, info)
    raise typer.Exit(exit_code(findings, outputs.fail_on))


def _apply_config(config: Config, results: list[ConfigResult]) -> ConfigInfo | None:
    """Suppress in place, per server: its findings are those that count, the suppressed ones move beside them. The
    config in use (and what it was refused: a discovered config cannot suppress error-level security findings)."""
    refused: list[RefusedSuppression] = []
    for result in results:
        for server in result.servers:
            applied = config.split(server.findings)
            server.findings, server.suppressed = applied.active, applied.suppressed
            refused += applied.refused
    return config.info(refused)


def _print_config(out: Console, info: ConfigInfo | None, results: list[ConfigResult]) -> None:
    if info is None:
        return
    suppressed = sum(len(s.suppressed) for r in results for s in r.servers)
    how = "given with --config" if info.explicit else "discovered in the working directory"
    out.print(f"config {escape_for_terminal(info.path)} ({how}): suppressed {suppressed} finding(s), not counted",
              markup=False)
    for item in info.refused:
        out.print(f"  NOT suppressed {item.rule_id} by {escape_for_terminal(item.entry, 240)}: "
                  f"{escape_for_terminal(item.reason, 500)}", markup=False)


def _refuse_overwriting_a_config(outputs: ReportOutputs, read: Callable[[Path], object]) -> None:
    """`check-config --json a.json b.json` took `--json` as a switch before; now a.json is the output PATH. Never
    overwrite a file that is an MCP client config."""
    for flag, target in (("--json", outputs.json), ("--sarif", outputs.sarif), ("--markdown", outputs.markdown)):
        if target is None or target == STDOUT or not Path(target).is_file():
            continue
        try:
            read(Path(target))
        except UsageError:
            continue  # not a client config: an earlier report, which may be replaced
        raise UsageError(f"{flag} {target} is an MCP client config, not a report file: {flag} takes the output PATH "
                         "(- for stdout); give the configs to check after it")


def _write_outputs(results: list[ConfigResult], outputs: ReportOutputs, info: ConfigInfo | None) -> None:
    from scanner.report import config_views as views

    if outputs.json:
        write_text(outputs.json, json.dumps(views.json_document(results, info), indent=2) + "\n", "the JSON report")
    artifacts = _artifacts(results) if outputs.sarif or outputs.annotations else {}
    if outputs.sarif:
        write_json(outputs.sarif, views.config_sarif(results, artifacts), "the SARIF report")
    if outputs.markdown:
        write_text(outputs.markdown, views.config_markdown(results, info), "the Markdown report")
    if outputs.annotations:
        shown = {level.value for level in ASCENDING if at_least(level, outputs.min_severity)}
        print_annotations(views.config_annotations(results, artifacts, shown))


def _artifacts(results: list[ConfigResult]) -> dict[str, Artifact]:
    """Each config file, and the line of each server's entry in it (`"NAME": {`)."""
    from scanner.report.locations import OBJECT_KEY, file_artifact, first_lines

    artifacts = {}
    for result in results:
        try:
            text = Path(result.path).read_text(encoding="utf-8-sig", errors="replace")
        except OSError:  # read a moment ago; without it the results point at line 1
            text = ""
        artifacts[result.path] = file_artifact(result.path, first_lines(text, OBJECT_KEY))
    return artifacts


def _filtered(result: ConfigResult, min_severity: str) -> ConfigResult:
    copy = result.model_copy(deep=True)
    for server in copy.servers:
        server.findings = at_or_above(server.findings, min_severity)
    return copy


def _print_terminal(out: Console, results: list[ConfigResult], all_findings: list[Finding]) -> None:
    for result in results:
        out.print(f"{escape_for_terminal(result.path)} ({result.format}): {len(result.servers)} server(s)",
                  markup=False)
        for server in result.servers:
            out.print("  " + _server_line(server), markup=False)
            for f in server.findings:
                out.print(f"    {f.severity} {f.rule_id} {f.rule_name}: {escape_for_terminal(f.message)}",
                          markup=False)
    from scanner.report.config_views import counts as count_levels

    counts = count_levels(all_findings)
    servers = sum(len(r.servers) for r in results)
    out.print(f"{servers} server(s) in {len(results)} file(s): {counts['error']} error(s), "
              f"{counts['warning']} warning(s), {counts['info']} info", markup=False)


def _server_line(server: ServerResult) -> str:
    parts = [escape_for_terminal(server.name, 200), server.transport]
    if server.scope:
        parts.append(f"[project {escape_for_terminal(server.scope, 300)}]")
    if server.disabled:
        parts.append("(disabled)")
    if server.remote:
        parts.append(escape_for_terminal(server.remote, 300))
    if server.runner:
        parts.append(server.runner + " " + " ".join(escape_for_terminal(p, 300) for p in server.packages))
    elif server.not_checked:
        parts.append(f"launch not checked: {escape_for_terminal(server.not_checked, 500)}")
    if server.env_names:
        names = ", ".join(escape_for_terminal(n, 100) for n in server.env_names)
        parts.append(f"env: {names} (values not shown)")
    return "  ".join(parts)
