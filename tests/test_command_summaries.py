"""The root `--help` lists the commands by their stored summaries (scanner/cli/command_summaries.py) instead of
building every command: the same help, byte for byte, in rich and plain mode, and a table of other sources is never
used."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
import typer

from scanner.cli import command_summaries
from scanner.cli.app import COMMANDS, app
from scanner.cli.command_summaries import TABLE, load_summaries, table_of

WRITE_AGAIN = "write the table again: .venv/bin/python -m scanner.write_tables"


def test_the_shipped_table_is_current() -> None:
    commands = typer.main.get_command(app).commands  # type: ignore[attr-defined]
    built = table_of({name: commands[name] for name in COMMANDS}, COMMANDS)
    assert json.loads(TABLE.read_text(encoding="utf-8")) == built, WRITE_AGAIN
    assert load_summaries(COMMANDS) == built["summaries"]


def _help(*, table: bool, rich: bool) -> tuple[str, list[str]]:
    """The root help of a fresh process, with the shipped table or as if it had none, and which of three command
    modules it imported."""
    env = {**os.environ, "COLUMNS": "120", "TYPER_USE_RICH": "1" if rich else "0", "PYTHONPATH": os.pathsep.join(
        filter(None, [str(Path(__file__).resolve().parent.parent), os.environ.get("PYTHONPATH")]))}
    code = ("import sys\nfrom scanner.cli import command_summaries\n"
            + ("" if table else "command_summaries.load_summaries = lambda modules, path=None: None\n")
            + "from scanner.cli.app import main\nsys.argv = ['mcp-sandbox', '--help']\n"
              "try:\n    main()\nexcept SystemExit:\n    pass\n"
              "print('BUILT ' + ' '.join(sorted(m for m in sys.modules if m in ('scanner.cli.scan', "
              "'scanner.cli.batch', 'scanner.cli.check'))), file=sys.stderr)")
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120, env=env)
    assert result.returncode == 0, result.stderr
    return result.stdout, result.stderr.strip().splitlines()[-1].split()[1:]


@pytest.mark.parametrize("rich", [True, False], ids=["rich", "plain"])
def test_the_help_is_the_same_without_building_the_commands(rich: bool) -> None:
    (stored, imported), (built, all_imported) = _help(table=True, rich=rich), _help(table=False, rich=rich)
    assert imported == []  # no command module imported for the list
    assert all_imported == ["scanner.cli.batch", "scanner.cli.check", "scanner.cli.scan"]  # near miss: all built
    assert stored == built
    assert "check" in stored and "Lint a saved tools/list offline" in stored


def test_a_table_of_other_sources_or_commands_is_not_used(tmp_path: Path) -> None:
    shipped = json.loads(TABLE.read_text(encoding="utf-8"))
    path = tmp_path / "summaries.json"
    path.write_text(json.dumps(shipped), encoding="utf-8")
    assert load_summaries(COMMANDS, path) == shipped["summaries"]
    for stale in ({**shipped, "sources_sha256": "0" * 64},  # a command module edited since
                  {**shipped, "summaries": dict(list(shipped["summaries"].items())[1:])}):  # a command since added
        path.write_text(json.dumps(stale), encoding="utf-8")
        assert load_summaries(COMMANDS, path) is None
    path.write_text("<<<<<<< HEAD\n", encoding="utf-8")
    assert load_summaries(COMMANDS, path) is None
    assert command_summaries.sources_digest(["no_such_module"]) is None
