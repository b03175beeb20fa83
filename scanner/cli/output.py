"""What every report-writing command does with its outputs, in one place: check the flags and the output paths
before any work starts, then show the terminal view, write the JSON/SARIF/Markdown files (`-` is stdout) and print
GitHub annotations; and the exit-code gate (`--fail-on`, `--fail-under`), with the last line on stderr saying why
the exit code is what it is (`exit 1: S8 error at or above --fail-on error`).

Light at import (every command's signature names ReportOutputs, and `--version` builds them all): rich, the report
model and the views are imported by the functions that use them."""

from __future__ import annotations

import json
import os
import sys
import uuid
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, TextIO

from scanner.errors import UsageError
from scanner.report.severity import ASCENDING, FAIL_ON_LEVELS, at_least, meets_fail_on
from sandbox.core.untrusted import escape_json_text

if TYPE_CHECKING:
    from rich.console import Console

    from scanner.report.locations import Artifact
    from scanner.report.model import Finding, Report

STDOUT = "-"


@dataclass(frozen=True)
class ReportOutputs:
    """The shared report options of a command (scanner.cli.options.with_report_options): the outputs (`json`,
    `sarif`, `markdown`: a path, `-`, or None), the gate level and what the terminal and annotations show."""

    json: str | None = None
    sarif: str | None = None
    markdown: str | None = None
    fail_on: str = "error"
    min_severity: str = "info"
    quiet: bool = False
    annotations: bool = False

    @property
    def uses_stdout(self) -> bool:
        return self.annotations or STDOUT in (self.json, self.sarif, self.markdown)

    def terminal(self, soft_wrap: bool = False) -> Console | None:
        """Where the terminal view goes: stderr when stdout carries an output, nowhere with --quiet."""
        if self.quiet:
            return None
        from rich.console import Console

        return Console(stderr=self.uses_stdout, highlight=False, soft_wrap=soft_wrap, emoji=False)


def check_levels(fail_on: str, min_severity: str, fail_under: int | None = None) -> None:
    if fail_on not in FAIL_ON_LEVELS:
        raise UsageError(f"--fail-on must be one of {', '.join(FAIL_ON_LEVELS)}, not {fail_on!r}")
    if min_severity not in ASCENDING:
        raise UsageError(f"--min-severity must be one of {', '.join(ASCENDING)}, not {min_severity!r}")
    if fail_under is not None and not 0 <= fail_under <= 100:
        raise UsageError(f"--fail-under must be between 0 and 100, not {fail_under}")


def check_writable(target: str | Path | None, what: str, inputs: Sequence[Path | str] = ()) -> None:
    """Refuse, before any work, an output path that cannot be written (a folder, in a missing folder) or that is one
    of the command's own inputs (`--json FILE…` where `--json` takes the output PATH would overwrite FILE)."""
    if target is None or str(target) == STDOUT:
        return
    if str(target) == "":  # `--json ''` (an unset variable): Path('') is the working directory
        raise UsageError(f"cannot write {what}: the path is empty; give a file path (or - for stdout)")
    path = Path(target)
    if path.is_dir():
        raise UsageError(f"cannot write {what} to {target}: it is a directory; give a file path")
    if not path.parent.is_dir():
        why = "is a file, not a folder" if path.parent.exists() else "does not exist"
        raise UsageError(f"cannot write {what} to {target}: the folder {path.parent} {why}")
    if path.exists() and any(Path(i).exists() and os.path.samefile(path, i) for i in inputs if str(i) != STDOUT):
        raise UsageError(f"cannot write {what} to {target}: it is an input of this command (the flag takes the "
                         "output PATH, or - for stdout)")
    if not os.access(path.parent, os.W_OK) or path.exists() and not os.access(path, os.W_OK):
        raise UsageError(f"cannot write {what} to {target}: permission denied")


# What a folder TARGET's install reads first: an output over one (`scan ./pkg --json ./pkg/package.json`) would
# replace the package's own manifest with the report after the scan. A plugin's own files are the plugin door's
# (scanner/cli/plugin.py refuse_the_envelope).
MANIFESTS = ("package.json", "package-lock.json", "npm-shrinkwrap.json", "pyproject.toml", "setup.py", "setup.cfg",
             "requirements.txt", "uv.lock", "poetry.lock")


def folder_manifests(target: str | None) -> list[Path]:
    """The manifests a folder TARGET holds (none for a registry target, a file or nothing): inputs of the scan."""
    if not target or ":" in target.split("/", 1)[0]:  # npm:…, pypi:…, docker:…
        return []
    try:
        folder = Path(target).expanduser()
        return [folder / name for name in MANIFESTS if (folder / name).is_file()] if folder.is_dir() else []
    except OSError:  # a name too long to be a path: the target's own parsing says so
        return []


OutputPath = tuple[str | Path | None, str]  # a path (or None, or `-`) and what is written there


def check_outputs(outputs: ReportOutputs, inputs: Sequence[Path | str | None] = (), fail_under: int | None = None,
                  others: Sequence[OutputPath] = ()) -> None:
    """Before any work: the levels, at most one output on stdout, every output path writable, none an input (the
    command's files, its --config…) and no two the same file (`others`: the command's other outputs, a lock)."""
    check_levels(outputs.fail_on, outputs.min_severity, fail_under)
    on_stdout = [o == STDOUT for o in (outputs.json, outputs.sarif, outputs.markdown)] + [outputs.annotations]
    if sum(on_stdout) > 1:
        raise UsageError("only one of --json/--sarif/--markdown (-) and --github-annotations can write to stdout")
    if any(on_stdout) and sys.stdout is None:  # the shell closed it (`>&-`)
        raise UsageError("standard output is closed: give each of --json/--sarif/--markdown a file path instead of "
                         "-, or drop --github-annotations")
    given = [i for i in inputs if i is not None]
    named: list[OutputPath] = [(outputs.json, "the JSON report"), (outputs.sarif, "the SARIF report"),
                               (outputs.markdown, "the Markdown report"), *others]
    for target, what in named:
        check_writable(target, what, given)
    refuse_one_file_twice(named)


def refuse_one_file_twice(targets: Sequence[OutputPath]) -> None:
    """Two outputs naming one file (`--json r --sarif ./r`, or a hard link) would each replace the other: refused."""
    seen: list[tuple[Path, str]] = []
    for target, what in targets:
        if target is None or str(target) == STDOUT:
            continue
        path = Path(target).resolve()
        for earlier, earlier_what in seen:
            if path == earlier or path.exists() and earlier.exists() and os.path.samefile(path, earlier):
                raise UsageError(f"{earlier_what} and {what} would both be written to the same file {target}; give "
                                 "each its own path")
        seen.append((path, what))


def write_text(target: str, text: str, what: str) -> None:
    """`text` to stdout (`-`), or to the file `target`, which a reader (or a scan interrupted as it writes) sees
    whole or not at all: a regular file is written beside and renamed into place; anything else that exists there (a
    pipe, a device such as /dev/stderr) is written to as it is."""
    if target == STDOUT:
        write_stdout(text, what)
        return
    path = Path(target)
    try:
        if (path.exists() and not path.is_file()) or not path.parent.is_dir():
            path.write_text(text, encoding="utf-8")  # a pipe or a device as it is; a missing folder: the error below
            return
        from scanner.atomic_write import atomic_write_bytes

        try:
            atomic_write_bytes(path, text.encode("utf-8"), durable=False)
        except PermissionError:  # a file we may write in a folder we may not create in: written in place
            path.write_text(text, encoding="utf-8")
    except OSError as exc:
        raise UsageError(f"cannot write {what} to {target}: {exc.strerror or exc}") from exc


def write_stdout(text: str, what: str) -> None:
    """`text` on standard output; exit 2 when the shell closed it (`>&-`: Python then has no sys.stdout at all)."""
    if sys.stdout is None:
        raise UsageError(f"cannot write {what} to standard output: it is closed; give a file path instead of -")
    from scanner.cli.stdout_guard import write_utf8

    write_utf8(text)


def safe_json_text(text: str) -> str:
    """escape_json_text(text): every character it escapes but DEL is outside ASCII, so an all-ASCII document
    without DEL (most are) is returned as it is without a search through it (~12 ms for a 3,000-tool report)."""
    return text if text.isascii() and "\x7f" not in text else escape_json_text(text)


def write_json(target: str, document: object, what: str) -> None:
    write_text(target, safe_json_text(json.dumps(document, indent=2, ensure_ascii=False)) + "\n", what)


def at_or_above(findings: list[Finding], level: str) -> list[Finding]:
    return [f for f in findings if at_least(f.severity, level)]


@contextmanager
def workflow_commands_stopped(stream: TextIO) -> Iterator[None]:
    """On GitHub Actions, what is written to `stream` inside is read by the runner between `::stop-commands::TOKEN`
    and `::TOKEN::` (TOKEN random): the runner takes any line that starts with `::` after its leading spaces as a
    workflow command, and the terminal view wraps a server's long text onto lines of their own that can start so.
    Elsewhere nothing is added."""
    if os.environ.get("GITHUB_ACTIONS") != "true":
        yield
        return
    token = f"mcp-sandbox-{uuid.uuid4().hex}"
    stream.write(f"::stop-commands::{token}\n")
    stream.flush()
    try:
        yield
    finally:
        stream.write(f"::{token}::\n")
        stream.flush()


def print_annotations(lines: list[str]) -> None:
    for line in lines:
        print(line)


def emit_report(report: Report, outputs: ReportOutputs, artifact: Artifact | None = None) -> None:
    """The terminal view, the report files and the annotations asked for; results point at `artifact` (by default
    the report's target)."""
    from scanner.report.locations import report_artifact

    where = artifact or report_artifact(report)
    console = outputs.terminal()
    if console is not None:
        from scanner.report.terminal import render

        with workflow_commands_stopped(console.file):
            render(report, console, outputs.min_severity)  # type: ignore[arg-type]
    if outputs.json:
        write_text(outputs.json, safe_json_text(report.model_dump_json(indent=2)) + "\n", "the JSON report")
    if outputs.sarif:
        from scanner.report.sarif import to_sarif

        write_json(outputs.sarif, to_sarif(report, where), "the SARIF report")
    if outputs.markdown:
        from scanner.report.markdown import to_markdown

        write_text(outputs.markdown, to_markdown(report), "the Markdown report")
    if outputs.annotations:
        from scanner.report.github_annotations import annotations

        print_annotations(annotations(at_or_above(report.findings, outputs.min_severity), where,
                                      report.server.name or report.target.name))


def exit_code(findings: list[Finding], fail_on: str, score: int | None = None, fail_under: int | None = None) -> int:
    """1 when a finding is at or above fail_on, or the score is under fail_under; else 0."""
    if any(meets_fail_on(f.severity, fail_on) for f in findings):
        return 1
    if fail_under is not None and score is not None and score < fail_under:
        return 1
    return 0


def finish(report: Report, outputs: ReportOutputs, fail_under: int | None = None, lock_refused: bool = False) -> int:
    """The exit code of a report (exit_reason.decide), and its reason as the run's last line on stderr (not with
    --quiet); `lock_refused`: `scan --lock` did not refresh the lock (error-level changes)."""
    from scanner.cli.exit_reason import decide

    decision = decide(report, outputs.fail_on, fail_under, lock_refused=lock_refused)
    if not outputs.quiet:
        print(decision.line, file=sys.stderr)
    return decision.code
