"""`mcp-sandbox diff OLD.json NEW.json`: the release diff of two scan reports of one package (the same comparison a
batch makes against its store: scanner/batch/release_diff.py, rules I12/I13)."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import TYPE_CHECKING

import typer

from scanner.cli.options import fail_on_option, json_option
from scanner.errors import UsageError

if TYPE_CHECKING:
    from scanner.report.model import Report

HELP = {
    "old": "The JSON report of the earlier release (`scan --json`, or a batch's reports/…/<version>.json).",
    "new": "The JSON report of the later release of the same package.",
    "json": "Write NEW's report with its `changes_since` section, the I12/I13 findings and the verdict they give "
            "(`-` for stdout).",
}


def diff(
    old_path: Path = typer.Argument(..., metavar="OLD.json", help=HELP["old"]),
    new_path: Path = typer.Argument(..., metavar="NEW.json", help=HELP["new"]),
    json_out: str | None = json_option(HELP["json"]),
    fail_on: str = fail_on_option(),
) -> None:
    """What changed in behaviour and surface between two releases of a package.

    Exit codes: 0 no change at or above --fail-on; 1 a change at or above it; 2 bad input (not a report, or reports
    of two different packages or of one version).
    """
    from sandbox.core.untrusted import escape_for_terminal, escape_json_text
    from scanner.batch.release_diff import change_findings, release_changes, same_package, with_changes
    from scanner.cli.output import STDOUT, check_levels, check_writable, write_text
    from scanner.report.severity import meets_fail_on

    check_levels(fail_on, "info")
    check_writable(json_out, "the JSON report", [old_path, new_path])
    old, new = _report(old_path), _report(new_path)
    if not same_package(old, new):
        raise UsageError(f"{old_path} and {new_path} are not two versions of one package ({_label(old)} vs "
                         f"{_label(new)}); give the reports of two releases of the same package")
    changes = release_changes(old, new, str(old_path))
    findings = change_findings(changes)
    lines = sys.stderr if json_out == STDOUT else sys.stdout  # `--json -`: stdout carries the JSON alone
    for found in findings:
        print(f"{found.severity:<7} {found.rule_id} {escape_for_terminal(found.message, 1_000)}", file=lines)
    listed = [change for change in changes.surface if change.severity == "info"]  # a change, but no finding (I13)
    for change in listed:
        print(f"info    {change.kind.replace('_', ' ')}: {escape_for_terminal(change.message, 1_000)}", file=lines)
    for note in changes.not_compared:
        print(f"not compared: {note}", file=sys.stderr)
    if not findings and not listed:
        print(f"no change in behaviour or surface since {escape_for_terminal(old.target.version or '?', 100)}",
              file=lines)
    if json_out is not None:
        text = with_changes(new, changes).model_dump_json(indent=2)
        write_text(json_out, escape_json_text(text) + "\n", "the JSON report")
    raise typer.Exit(1 if any(meets_fail_on(f.severity, fail_on) for f in findings) else 0)


def _report(path: Path) -> Report:
    """A saved report, read as every JSON input is (scanner/json_input.py: a regular file within the size limit,
    UTF-8, JSON), then validated."""
    from pydantic import ValidationError

    from scanner.json_input import read_json
    from scanner.report.model import Report

    if str(path) == "-":
        raise UsageError("diff reads two report files; - (standard input) is not one of them")
    try:
        return Report.model_validate(read_json(path, "report").value)
    except ValidationError:
        raise UsageError(f"{path} is not an mcp-sandbox JSON report (write one with `scan --json FILE`)") from None


def _label(report: Report) -> str:
    from sandbox.core.untrusted import escape_for_terminal

    target = report.target
    version = f"@{target.version}" if target.version is not None else " (no version)"  # a `check` report's
    return escape_for_terminal(f"{target.ecosystem or target.kind}:{target.name}{version}", 300)


def register(app: typer.Typer) -> None:
    app.command("diff")(diff)
