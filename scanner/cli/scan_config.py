"""`mcp-sandbox scan --config-file FILE [--server NAME…] [--pass-config-env]`: every local server of an MCP client
config scanned, one after the other, each in its own sandbox with its configured arguments; one table at the end.

The JSON report (--json) is one document:

    {"config": PATH, "format": "claude-code", "servers": [
        {"name": …, "scope": project path | null, "disabled": bool, "target": "npm:…" | null,
         "status": "scanned" | "not scanned" | "error", "reason": one line | null,
         "env_passed": [names], "env_not_passed": [names], "report": the scan's report | null}]}

The exit code is the worst of the servers': 3 when any server was not scanned (a remote entry, one that cannot be
mapped, one whose scan could not complete), else 1 when any has a finding at or above --fail-on (or a score under
--fail-under), else 0."""

from __future__ import annotations

import sys
from collections.abc import Callable
from dataclasses import dataclass, replace
from pathlib import Path
from typing import TYPE_CHECKING, Any

from sandbox.core.errors import SandboxError, UserInputError
from sandbox.core.untrusted import escape_for_terminal
from scanner.cli.exit_reason import EXIT_INCOMPLETE, ExitDecision, decide
from scanner.cli.output import ReportOutputs, write_json
from scanner.errors import UsageError
from scanner.report.severity import most_severe_first

if TYPE_CHECKING:
    from rich.console import Console
    from rich.table import Table

    from scanner.cli.remote_options import RemoteFlags
    from scanner.pipeline.config_doors import PlannedServer
    from scanner.pipeline.remote_target import RemoteTarget
    from scanner.pipeline.scan import ScanOptions
    from scanner.report.model import Report
    from scanner.signing.keys import Signer


@dataclass(frozen=True)
class ConfigRun:
    """What `scan` was given that concerns --config-file (and what must not come with it)."""

    path: Path | None
    servers: list[str]
    pass_env: bool
    target: str | None = None
    tail: list[str] | None = None
    lock_path: Path | None = None
    signer: Signer | None = None
    remote: RemoteFlags | None = None  # --url and its flags: only --allow-writes goes with --config-file


@dataclass
class ServerOutcome:
    planned: PlannedServer
    report: Report | None = None
    error: str | None = None  # a scan that stopped with a one-line error (exit 2 or 3 for a single scan)

    def decision(self, fail_on: str, fail_under: int | None) -> ExitDecision:
        if self.report is not None:
            return decide(self.report, fail_on, fail_under)
        return ExitDecision(EXIT_INCOMPLETE, f"not scanned: {self.error or self.planned.not_scanned}")


RemoteRun = Callable[["RemoteTarget", "ScanOptions"], "Report"]


def scan_config(run_request: ConfigRun, options: ScanOptions, outputs: ReportOutputs, fail_under: int | None, *,
                run: Callable[[ScanOptions], Report], run_remote: RemoteRun | None = None) -> int:
    """Scan each server of the config in turn; the table, the JSON document, and the worst exit code."""
    from scanner.pipeline.config_doors import plan_servers
    from scanner.provenance.client_config import read_client_config

    path = _check(run_request, options, outputs)
    config = read_client_config(path, keep_env=run_request.pass_env)
    planned = plan_servers(config, run_request.servers, run_request.pass_env)
    console = outputs.terminal(soft_wrap=True)
    if console is not None:
        console.print(f"{escape_for_terminal(config.path)} ({config.format}): {len(planned)} server(s), scanned one "
                      "after the other", markup=False)
    remote_run = run_remote or remote_runner(run_request.remote)
    outcomes = [_scan_one(server, options, outputs, console, run, remote_run) for server in planned]
    if console is not None:
        console.print(_table(outcomes))
    if outputs.json:
        write_json(outputs.json, _document(config.path, config.format, outcomes), "the JSON report")
    return _finish(outcomes, outputs, fail_under)


def _check(run_request: ConfigRun, options: ScanOptions, outputs: ReportOutputs) -> Path:
    """--config-file's flags, before anything is read or installed."""
    if run_request.path is None:
        raise UsageError("--server and --pass-config-env go with --config-file FILE")
    if run_request.remote is not None and (run_request.remote.url is not None or run_request.remote.headers
                                           or run_request.remote.header_envs):
        raise UsageError("--config-file scans the config's remote entries with their own URL and headers: drop --url, "
                         "--header and --header-env (or scan the --url on its own)")
    if run_request.target is not None or run_request.tail is not None:
        raise UsageError("--config-file scans the servers of the config: give no TARGET or launch command with it")
    if options.command is not None:
        raise UsageError("--config-file: each server's command comes from the config; drop --command")
    if run_request.lock_path is not None or run_request.signer is not None:
        raise UsageError("--lock and --sign take one server's report; scan a server on its own to lock or sign it")
    if outputs.sarif or outputs.markdown or outputs.annotations:
        raise UsageError("--config-file writes one JSON document for all the servers (--json); --sarif, --markdown "
                         "and --github-annotations take a single server's report")
    return run_request.path.expanduser()


def remote_runner(flags: RemoteFlags | None) -> RemoteRun:
    """How a remote entry is scanned: as `scan --url` scans one (NOT sandboxed), with a spinner."""
    allow_writes = flags is not None and flags.allow_writes

    def run_one(remote: RemoteTarget, options: ScanOptions) -> Report:
        from scanner.cli.spinner import spinning
        from scanner.pipeline.remote import run_remote_scan

        with spinning("scanning") as progress:
            return run_remote_scan(remote, options, allow_writes=allow_writes, progress=progress)

    return run_one


def _scan_one(server: PlannedServer, options: ScanOptions, outputs: ReportOutputs, console: Console | None,
              run: Callable[[ScanOptions], Report], run_remote: RemoteRun | None = None) -> ServerOutcome:
    from scanner.pipeline.doors import launch_origin, with_launch
    from scanner.report.terminal import render

    mapping = server.mapping
    if console is not None:
        _announce(server, console)
    if mapping is None and server.remote is None:
        return ServerOutcome(server)
    try:
        if server.remote is not None:
            report = (run_remote or remote_runner(None))(server.remote, options)
        else:
            assert mapping is not None
            policy = replace(options.policy, env={**server.env, **options.policy.env})  # --env wins over the config
            one = replace(options, target=mapping.target, server_args=mapping.server_args, command=mapping.command,
                          policy=policy, launch_findings=mapping.findings, plugin_listed=mapping.runner == "plugin")
            report = with_launch(run(one), launch_origin(mapping, server.name))
    except (UsageError, UserInputError, SandboxError) as exc:
        return ServerOutcome(server, error=" ".join(str(exc).split()))
    if console is not None:
        render(report, console, outputs.min_severity)  # type: ignore[arg-type]
    return ServerOutcome(server, report)


def _announce(server: PlannedServer, console: Console) -> None:
    """The server's heading: what it maps to (or why it is not scanned), the names not passed, the notes."""
    if server.remote is not None:
        what = f"remote Streamable HTTP server at {server.remote.origin()}: NOT sandboxed"
    elif server.mapping is not None:
        what = server.mapping.describe()
    else:
        what = f"not scanned: {server.not_scanned}"
    console.print(f"\n== server {server.label}: {escape_for_terminal(what, 1_000)}", markup=False)
    for kind, names, passed in (("env", server.env_not_passed, server.env),
                                ("headers", server.headers_not_passed, server.remote and server.remote.secrets)):
        if names:
            console.print(f"   {kind} not passed: " + ", ".join(escape_for_terminal(n, 80) for n in names)
                          + ("" if passed else " (--pass-config-env passes them)"), markup=False)
    for note in server.notes:
        console.print(f"   note: {escape_for_terminal(note, 400)}", markup=False)


def shown_target(planned: PlannedServer) -> str | None:
    """The target as the table and the JSON show it: the mapped one, or a remote entry's scheme and host."""
    if planned.remote is not None:
        return planned.remote.origin()
    return planned.mapping.target if planned.mapping else None


def _top_finding(report: Report) -> str:
    if not report.findings:
        return "none"
    top = sorted(report.findings, key=lambda f: most_severe_first(f.severity))[0]
    return f"{top.rule_id} {top.severity}: {escape_for_terminal(top.message, 100)}"


def _table(outcomes: list[ServerOutcome]) -> Table:
    from rich.table import Table
    from rich.text import Text

    table = Table(title="Servers", title_justify="left")
    for column in ("server", "target", "verdict", "score", "top finding"):
        table.add_column(column, overflow="fold")
    for outcome in outcomes:
        shown = shown_target(outcome.planned)
        target = escape_for_terminal(shown, 200) if shown else "-"
        if outcome.planned.remote is not None:
            target += " (not sandboxed)"
        report = outcome.report
        label = outcome.planned.label  # a config's names and a server's finding are text, not rich markup
        if report is None:
            why = escape_for_terminal(outcome.error or outcome.planned.not_scanned or "", 300)
            table.add_row(*map(Text, (label, target, "not scanned", "-", why)))
            continue
        score = str(report.score.value) if report.score else "-"
        verdict = report.verdict or report.status
        table.add_row(*map(Text, (label, target, verdict, score, _top_finding(report))))
    return table


def _document(path: str, fmt: str, outcomes: list[ServerOutcome]) -> dict[str, Any]:
    servers = []
    for outcome in outcomes:
        planned = outcome.planned
        status = "scanned" if outcome.report else "error" if outcome.error else "not scanned"
        remote = planned.remote
        servers.append({"name": planned.name, "scope": planned.scope, "disabled": planned.disabled,
                        "target": shown_target(planned), "transport": planned.transport,
                        "sandboxed": planned.mapping is not None, "status": status,
                        "reason": outcome.error or planned.not_scanned, "env_passed": sorted(planned.env),
                        "env_not_passed": planned.env_not_passed,
                        "headers_passed": sorted(remote.secrets) if remote else [],
                        "headers_not_passed": planned.headers_not_passed, "notes": planned.notes,
                        "report": outcome.report.model_dump(mode="json") if outcome.report else None})
    return {"config": path, "format": fmt, "servers": servers}


def _finish(outcomes: list[ServerOutcome], outputs: ReportOutputs, fail_under: int | None) -> int:
    """The worst exit code of the servers, and the line saying which server it came from (and how many others)."""
    decisions = [(o.planned.label, o.decision(outputs.fail_on, fail_under)) for o in outcomes]
    if not decisions:
        decisions = [("(none)", ExitDecision(EXIT_INCOMPLETE, "the config selects no server"))]
    worst = max(decision.code for _, decision in decisions)
    at_worst = [(label, decision) for label, decision in decisions if decision.code == worst]
    label, decision = at_worst[0]
    more = f" (and {len(at_worst) - 1} more server(s) at exit {worst})" if len(at_worst) > 1 else ""
    if not outputs.quiet:
        line = ExitDecision(worst, f"{len(decisions)} server(s); worst: {label}: {decision.reason}{more}").line
        print(line, file=sys.stderr)
    return worst
