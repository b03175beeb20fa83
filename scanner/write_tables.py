"""Write the data the CLI reads at start-up from files derived from their sources, after editing a source: the
rules catalogues' parsed copies (scanner/parsed_toml.py: the registry's and vet's), S8's literal table
(scanner/rules/static/stored_literals.py) and the root help's command summaries (scanner/cli/command_summaries.py).
The test suite fails, naming this command, while one is out of date.

    .venv/bin/python -m scanner.write_tables
"""

from __future__ import annotations

import json
from pathlib import Path

import typer

from scanner.cli import command_summaries
from scanner.cli.app import COMMANDS, app
from scanner.parsed_toml import write_copy
from scanner.rules import registry
from scanner.rules.registry import CATALOGUE
from scanner.rules.static.s08_hidden_text import DETECTORS
from scanner.rules.static.stored_literals import TABLE, table_rows
from scanner.vet import catalogue as vet_catalogue


def main() -> None:
    commands = typer.main.get_command(app).commands  # type: ignore[attr-defined]
    table = command_summaries.table_of({name: commands[name] for name in COMMANDS}, COMMANDS)
    command_summaries.TABLE.write_text(json.dumps(table, indent=1, ensure_ascii=False) + "\n", encoding="utf-8")
    copies = [command_summaries.TABLE, write_copy(Path(registry.__file__).with_name(CATALOGUE)),
              write_copy(Path(vet_catalogue.__file__).with_name(vet_catalogue.CATALOGUE))]
    rows = table_rows(detector.source for detector in DETECTORS)
    TABLE.write_text(json.dumps(rows, indent=1, ensure_ascii=True) + "\n", encoding="utf-8")
    print(f"wrote {', '.join(map(str, copies))} and {len(rows)} patterns' literals to {TABLE}")


if __name__ == "__main__":
    main()
