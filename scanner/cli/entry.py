"""The console script's entry (and `python -m scanner`'s): the CLI imported under a Ctrl-C guard. Typer, rich and the
app take the first tenth of a second or so to import; a Ctrl-C then ends with exit 130 (nothing has started, so
nothing is torn down), not with a traceback of the import machinery. A command line that looks like a package scan
has its sink begun first, while the CLI imports (scanner/cli/early_start.py)."""

from __future__ import annotations

import os
import sys
from typing import TYPE_CHECKING

from scanner.cli.interpreter import tune_interpreter

if TYPE_CHECKING:
    from scanner.pipeline.head_start import HeadStart


# pydantic looks for plugins (observability hooks such as logfire's) among the entry points of every installed
# distribution when it builds its first model: 15-25 ms of each command that makes a report, spent on a search that
# finds none in the CLI's own environment. Typer turns the same search off while it builds its flags' adapters; the
# CLI turns it off for the whole command, unless the user has set the variable themselves (to load a plugin).
PYDANTIC_PLUGINS = ("PYDANTIC_DISABLE_PLUGINS", "__all__")


def main() -> None:
    tune_interpreter()  # before any thread starts: the head start's engine calls get the interpreter back at once
    os.environ.setdefault(*PYDANTIC_PLUGINS)
    from scanner.cli.early_start import looks_like_package_scan

    if looks_like_package_scan(sys.argv[1:]):
        from scanner.cli.early_start import run_with_head_start

        run_with_head_start(_run_app)
    else:
        _run_app(None)


def _run_app(early: HeadStart | None) -> None:
    """The CLI, imported here; `early`: a head start for the scan to adopt. With one, the caller guards the import
    (its interrupt must close the head start before the line is written)."""
    try:
        from scanner.cli.app import main as run
    except KeyboardInterrupt:
        if early is not None:
            raise
        from scanner.pipeline.interrupts import INTERRUPTED_EXIT

        print("interrupted", file=sys.stderr)
        sys.exit(INTERRUPTED_EXIT)
    run(early)
