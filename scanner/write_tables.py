"""Write the data the CLI reads at start-up from files derived from their sources, after editing a source: the
rules catalogues' parsed copies (scanner/parsed_toml.py: the registry's and vet's), S8's literal table
(scanner/rules/static/stored_literals.py) and the root help's command summaries (scanner/cli/command_summaries.py).
The test suite fails, naming this command, while one is out of date.

    .venv/bin/python -m scanner.write_tables
"""

from __future__ import annotations

from pathlib import Path

import typer

from scanner.cli import command_summaries
from scanner.cli.app import COMMANDS, app
from scanner.derived_json import write_derived
from scanner.parsed_toml import write_copy
from scanner.rules import registry
from scanner.rules.static import stored_literals
from scanner.rules.static.s08_hidden_text import DETECTORS
from scanner.vet import catalogue as vet_catalogue


def main() -> None:
    commands = typer.main.get_command(app).commands  # type: ignore[attr-defined]
    write_derived(command_summaries.TABLE, command_summaries.table_of({name: commands[name] for name in COMMANDS},
                                                                      COMMANDS))
    rows = stored_literals.table_rows(detector.source for detector in DETECTORS)
    write_derived(stored_literals.TABLE, rows)
    written = [command_summaries.TABLE, stored_literals.TABLE,
               write_copy(Path(registry.__file__).with_name(registry.CATALOGUE)),
               write_copy(Path(vet_catalogue.__file__).with_name(vet_catalogue.CATALOGUE))]
    print(f"wrote {', '.join(map(str, written))} ({len(rows)} patterns' literals)")


if __name__ == "__main__":
    main()
