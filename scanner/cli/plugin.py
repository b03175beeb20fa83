"""`mcp-sandbox plugin DIR` (the Agent Plugins 1.0.0 envelope, offline) and the plugin branch of `scan DIR` (the
envelope, then every declared stdio server run and probed in its own sandbox, as `scan --config-file` runs a config's
servers; one result with a section per server, and the worst of them).

The JSON document of `scan PLUGIN --json` is {"plugin": PATH, "envelope": the envelope (as `plugin --json`),
"verdict": the worst server verdict or null, "sources": {"./FOLDER": the `vet` result of each bundled package
folder}, "servers": [as scan --config-file's servers]}. Exit codes: 1 when the
envelope has a FATAL or BREAKING finding (a conformant client rejects the plugin or a server entry), else the worst
of the servers' (3 when one was not scanned, or when the folder holds hooks or servers of another client: not
vetted); `plugin` alone: 1 on a FATAL/BREAKING finding, else 0."""

from __future__ import annotations

import sys
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING

import typer

from scanner.cli.options import json_option, quiet_option, sarif_option
from scanner.cli.output import STDOUT, ReportOutputs, check_writable, write_json
from scanner.errors import UsageError

if TYPE_CHECKING:
    from rich.console import Console

    from scanner.cli.scan_config import ConfigRun, ServerOutcome
    from scanner.pipeline.config_doors import PlannedServer
    from scanner.pipeline.scan import ScanOptions
    from scanner.plugins.model import EnvelopeResult
    from scanner.report.model import Report

VERDICTS = ("pass", "review", "incomplete", "block")  # least to most severe, as verdict_of ranks them


def register(app: typer.Typer) -> None:
    app.command("plugin")(plugin)


def plugin(
    folder: Path = typer.Argument(..., metavar="DIR", help="The plugin's root folder (the one holding plugin.json)."),
    json_path: str | None = json_option("Write the envelope findings as JSON to PATH (- for stdout)."),
    sarif_path: str | None = sarif_option(),
    quiet: bool = quiet_option(),
) -> None:
    """Check an Agent Plugins 1.0.0 package's envelope offline (plugin.json, mcp.json, skills/), with mcp-vet 0.15's
    rule ids and tiers, each finding citing its spec section. Runs nothing: `scan DIR` also runs its servers.

    Exit 0 when a conformant client loads the plugin and every server entry (TOLERATED, DEPRECATED and INFO findings
    only), 1 on a FATAL or BREAKING finding, 2 on unusable input."""
    from scanner.plugins import views
    from scanner.plugins.envelope import check_plugin

    if json_path == STDOUT and sarif_path == STDOUT:
        raise UsageError("only one of --json and --sarif can write to stdout (-)")
    for what, target in (("JSON", json_path), ("SARIF", sarif_path)):
        check_writable(target, f"the {what} report", [folder])
        refuse_the_envelope(target, f"the {what} report", folder)
    result = check_plugin(folder)
    if not quiet:
        stream = sys.stderr if STDOUT in (json_path, sarif_path) else sys.stdout
        print("\n".join(views.terminal_lines(result)), file=stream)
    if json_path:
        write_json(json_path, views.as_json(result), "the JSON report")
    if sarif_path:
        write_json(sarif_path, views.to_sarif(result), "the SARIF report")
    raise typer.Exit(1 if result.failing else 0)


def scan_plugin(given: ConfigRun, options: ScanOptions, outputs: ReportOutputs, fail_under: int | None, *,
                run: Callable[[ScanOptions], Report]) -> int:
    """`scan PLUGIN` (given.target): the envelope, each declared server in its own sandbox (one after the other),
    the table, and the exit code."""
    from scanner.cli.exit_reason import EXIT_INCOMPLETE
    from scanner.cli.scan_config import _document, _finish, _scan_one, _table  # the config run's own steps
    from scanner.plugins import views
    from scanner.plugins.envelope import check_plugin
    from scanner.plugins.servers import plan_plugin

    _check(given, options, outputs)
    envelope = check_plugin(Path(given.target or "."))
    console = outputs.terminal(soft_wrap=True)
    if console is not None:
        console.print("\n".join(views.terminal_lines(envelope)), markup=False)
    planned = plan_plugin(envelope)
    sources = _vet_bundled(envelope.root, planned, console)
    outcomes = [_scan_one(server, options, outputs, console, run) for server in planned]
    verdict = worst_verdict(outcomes)
    if envelope.runs_unvetted:  # a hook or another client's server: the scan of mcp.json's is no evidence about it
        verdict = max(verdict or "incomplete", "incomplete", key=VERDICTS.index)
    if console is not None and outcomes:
        console.print(_table(outcomes))
    if console is not None and (outcomes or envelope.runs_unvetted):
        console.print(verdict_line(verdict, outcomes, envelope), markup=False)
    if outputs.json:
        write_json(outputs.json, {"plugin": str(envelope.root), "envelope": views.as_json(envelope),
                                  "verdict": verdict, "sources": sources,
                                  "servers": _document("", "", outcomes)["servers"]},
                   "the JSON report")
    code = _finish(outcomes, outputs, fail_under) if outcomes else 0
    if envelope.runs_unvetted and code < EXIT_INCOMPLETE:
        code = EXIT_INCOMPLETE
        if not outputs.quiet:
            print(f"exit 3: incomplete: {unvetted_line(envelope)}", file=sys.stderr)
    if envelope.failing and not outputs.quiet:
        print(f"exit 1: {views.summary(envelope)}", file=sys.stderr)
    return max(code, 1 if envelope.failing else 0)


def _vet_bundled(root: Path, planned: list[PlannedServer], console: Console | None) -> dict[str, object]:
    """The offline source scan (`vet`, MCP 2026-07-28) of each package folder the plugin bundles a server in:
    reported (terminal and JSON, by the folder's plugin-relative path), not part of the exit code."""
    from sandbox.core.untrusted import escape_for_terminal
    from scanner.vet import vet_tree
    from scanner.vet.views import terminal_report

    folders = sorted({Path(p.mapping.target) for p in planned if p.mapping is not None and p.mapping.runner ==
                      "plugin"})
    sources: dict[str, object] = {}
    for folder in folders:
        relative = folder.relative_to(root).as_posix()
        label = "./" if relative == "." else f"./{relative}"
        result = vet_tree(folder)
        sources[label] = result.as_json()
        if console is not None:
            console.print(f"\n== bundled source {escape_for_terminal(label, 300)} (vet, MCP 2026-07-28; reported, "
                          "not gating)", markup=False)
            console.print("\n".join(terminal_report(result)), markup=False)
    return sources


def _check(given: ConfigRun, options: ScanOptions, outputs: ReportOutputs) -> None:
    remote = given.remote
    refused = {"-- SERVER ARGS": bool(options.server_args), "--lock": given.lock_path is not None,
               "--sign": given.signer is not None, "--url": remote is not None and remote.url is not None}
    flags = [flag for flag, present in refused.items() if present]
    if flags:
        raise UsageError(f"{flags[0]}: a plugin folder's servers come from its mcp.json and are scanned one by one; "
                         "scan a server on its own to give it arguments, lock or sign it")
    if options.command is not None:
        raise UsageError("--command: a plugin's servers are launched as its mcp.json says; drop --command")
    refuse_the_envelope(outputs.json, "the JSON report", Path(given.target or "."))
    if outputs.sarif or outputs.markdown or outputs.annotations:
        raise UsageError("scan PLUGIN writes one JSON document for the plugin (--json); --sarif, --markdown and "
                         "--github-annotations take a single server's report (the envelope: mcp-sandbox plugin DIR "
                         "--sarif PATH)")


ENVELOPE_FILES = ("plugin.json", "mcp.json")


def refuse_the_envelope(target: str | None, what: str, folder: Path) -> None:
    """An output over a file the envelope check reads (`plugin . --json plugin.json`: the manifest replaced by the
    report, exit 0) is refused; another file in the folder, a report of an earlier run, is written as usual."""
    if target is None or target == STDOUT or not Path(target).is_file():
        return
    path, root = Path(target).resolve(), folder.resolve()
    if path in {root / name for name in ENVELOPE_FILES} or path.name == "SKILL.md" and path.is_relative_to(root):
        raise UsageError(f"cannot write {what} to {target}: the plugin's {path.name}, an input of this command (the "
                         "flag takes the output PATH, or - for stdout)")


def worst_verdict(outcomes: list[ServerOutcome]) -> str | None:
    """The most severe verdict of the servers (block > incomplete > review > pass): a server whose scan did not
    complete, or that was not scanned, makes it incomplete at least (its silence is no evidence); None when there
    are no servers."""
    found = [o.report.verdict if o.report is not None and o.report.verdict in VERDICTS else "incomplete"
             for o in outcomes]
    return max(found, key=VERDICTS.index) if found else None


def verdict_line(verdict: str | None, outcomes: list[ServerOutcome], envelope: EnvelopeResult | None = None) -> str:
    scanned = sum(o.report is not None for o in outcomes)
    missing = len(outcomes) - scanned
    tail = f"; {missing} not scanned" if missing else ""
    if envelope is not None and envelope.runs_unvetted:
        tail += f"; {unvetted_line(envelope)}"
    return f"plugin verdict: {verdict or 'none'} (the worst of {scanned} scanned server(s){tail})"


def unvetted_line(envelope: EnvelopeResult) -> str:
    """What a client runs from the plugin folder that the scan did not vet (hooks, another client's servers)."""
    return f"not vetted, run by a client: {', '.join(u.file for u in envelope.runs_unvetted)}"
