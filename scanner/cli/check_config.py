"""`mcp-sandbox check-config FILE…`: lint the MCP servers of client configs before they are launched."""

from __future__ import annotations

import json
from pathlib import Path
from typing import TYPE_CHECKING

import typer
from rich.console import Console

from scanner.errors import UsageError
from scanner.report.model import Finding
from scanner.report.severity import ASCENDING, FAIL_ON_LEVELS, at_least, counts, meets_fail_on
from sandbox.core.untrusted import escape_for_terminal

if TYPE_CHECKING:
    from scanner.provenance.config_lint import ConfigResult, ServerResult



def register(app: typer.Typer) -> None:
    app.command("check-config")(check_config)


def check_config(
    files: list[Path] = typer.Argument(..., help="Client configs: claude_desktop_config.json, ~/.claude.json, "
                                                 ".mcp.json, ~/.cursor/mcp.json, .vscode/mcp.json …", show_default=False),
    as_json: bool = typer.Option(False, "--json", help="Print the results as JSON."),
    fail_on: str = typer.Option("error", "--fail-on", help="Exit 1 when a finding is at least this severe: "
                                                           "error, warning, info or never."),
    min_severity: str = typer.Option("info", "--min-severity", help="Show only findings at least this severe: "
                                                                    "error, warning or info."),
) -> None:
    """Lint each MCP server of client configs: unpinned launches (I1), known-bad releases (I8), typosquats (I9).

    Environment values are never printed; remote servers show only scheme and host.
    """
    if fail_on not in FAIL_ON_LEVELS:
        raise UsageError(f"--fail-on {fail_on!r} is not one of error, warning, info, never")
    if min_severity not in ASCENDING:
        raise UsageError(f"--min-severity {min_severity!r} is not one of error, warning, info")
    from scanner.provenance.client_config import read_client_config  # loaded only when the command runs
    from scanner.provenance.config_lint import lint_config

    results = [lint_config(read_client_config(path.expanduser())) for path in files]
    all_findings = [f for r in results for s in r.servers for f in s.findings]
    shown = [_filtered(r, min_severity) for r in results]
    if as_json:
        print(json.dumps(_json_document(shown, all_findings), indent=2))
    else:
        _print_terminal(shown, all_findings)
    if any(meets_fail_on(f.severity, fail_on) for f in all_findings):
        raise typer.Exit(1)


def _filtered(result: ConfigResult, min_severity: str) -> ConfigResult:
    copy = result.model_copy(deep=True)
    for server in copy.servers:
        server.findings = [f for f in server.findings if at_least(f.severity, min_severity)]
    return copy


def _counts(findings: list[Finding]) -> dict[str, int]:
    return counts(f.severity for f in findings)


def _json_document(results: list[ConfigResult], all_findings: list[Finding]) -> dict[str, object]:
    return {
        "files": [r.model_dump(mode="json") for r in results],
        "summary": {"files": len(results), "servers": sum(len(r.servers) for r in results),
                    "findings": _counts(all_findings)},
    }


def _print_terminal(results: list[ConfigResult], all_findings: list[Finding]) -> None:
    out = Console(highlight=False, soft_wrap=True)
    for result in results:
        out.print(f"{escape_for_terminal(result.path)} ({result.format}): {len(result.servers)} server(s)",
                  markup=False)
        for server in result.servers:
            out.print("  " + _server_line(server), markup=False)
            for f in server.findings:
                out.print(f"    {f.severity} {f.rule_id} {f.rule_name}: {escape_for_terminal(f.message)}",
                          markup=False)
    counts = _counts(all_findings)
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
    if server.env_names:
        names = ", ".join(escape_for_terminal(n, 100) for n in server.env_names)
        parts.append(f"env: {names} (values not shown)")
    return "  ".join(parts)
