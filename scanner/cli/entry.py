"""The console script's entry (and `python -m scanner`'s): the CLI imported under a Ctrl-C guard. Typer, rich and the
app take the first tenth of a second or so to import; a Ctrl-C then ends with exit 130 (nothing has started, so
nothing is torn down), not with a traceback of the import machinery."""

from __future__ import annotations

import sys

INTERRUPTED_EXIT = 130


def main() -> None:
    try:
        from scanner.cli.app import main as run
    except KeyboardInterrupt:
        print("interrupted", file=sys.stderr)
        sys.exit(INTERRUPTED_EXIT)
    run()
