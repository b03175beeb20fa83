"""A command's sandboxed scan and its interrupt: Ctrl-C (or SIGTERM/SIGHUP as one) after the sandbox was torn down
ends with exit 130 and the line saying what the teardown left. Typer turns a KeyboardInterrupt a command lets escape
into a silent exit 130, so every command that scans (`scan`, `lock TARGET`, `init-fixtures`) ends its interrupt
here."""

from __future__ import annotations

import sys
from typing import TYPE_CHECKING, NoReturn

import typer

if TYPE_CHECKING:
    from scanner.pipeline.scan import ScanOptions
    from scanner.report.model import Report


def run_sandboxed(options: ScanOptions, first: str) -> Report:
    """`run_target` with its spinner from the step `first`; an interrupt is exit 130 with the teardown's line."""
    from scanner.cli.spinner import spinning
    from scanner.pipeline.image_scan import run_target
    from scanner.pipeline.interrupts import ScanInterrupted

    try:
        with spinning(first) as progress:
            return run_target(options, progress=progress)
    except ScanInterrupted as interrupt:  # run_scan has torn the sandbox down in its finally block by now
        say_interrupted(interrupt.left)
    except KeyboardInterrupt:  # before the scan's sandbox began: nothing to tear down
        say_interrupted([])


def say_interrupted(left: list[str] | None, line: str | None = None) -> NoReturn:
    """The interrupted scan's last line (`line`, else one true to a teardown that left `left`; escaped), exit 130."""
    from sandbox.core.untrusted import escape_for_terminal
    from scanner.pipeline.interrupts import INTERRUPTED_EXIT, interrupted_line

    print(escape_for_terminal(interrupted_line(left) if line is None else line, 2000), file=sys.stderr)
    raise typer.Exit(INTERRUPTED_EXIT)
