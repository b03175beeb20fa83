"""The root `--help`'s line per command, without building the commands: `command_summaries.json` holds each
command's first paragraph of help as the built command gives it, keyed by a digest of the command modules' source.
Building every command for that list (importing every command module, reading every signature) cost `--help`
35-60 ms. A table of other sources (a module edited since, or not there to read) is not used: the commands are built
as before, and the test suite says when to write the table again (`python -m scanner.write_tables`)."""

from __future__ import annotations

import hashlib
import inspect
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Any

from typer.core import TyperCommand

from scanner.derived_json import read_derived

TABLE = Path(__file__).with_name("command_summaries.json")


def sources_digest(modules: Iterable[str]) -> str | None:
    """sha256 over the source of each command module (scanner/cli/MODULE.py), in order; None when one is unreadable."""
    digest = hashlib.sha256()
    for module in dict.fromkeys(modules):
        try:
            digest.update(Path(__file__).with_name(f"{module}.py").read_bytes())
        except OSError:
            return None
        digest.update(b"\0")
    return digest.hexdigest()


def load_summaries(modules: Mapping[str, str], path: Path = TABLE) -> dict[str, str] | None:
    """Each command's summary by name, in the order of `modules` (command name -> module); None unless the table is
    of these commands and of these modules' very source."""
    table = read_derived(path)
    if not isinstance(table, dict):
        return None
    digest, summaries = sources_digest(modules.values()), table.get("summaries")
    if digest is None or table.get("sources_sha256") != digest or not isinstance(summaries, dict):
        return None
    if list(summaries) != list(modules) or not all(isinstance(text, str) for text in summaries.values()):
        return None
    return summaries


def summary_of(command: Any) -> str:
    """The first paragraph of a built command's help, as the root help shows it."""
    return inspect.cleandoc(command.short_help or command.help or "").split("\n\n")[0]


def table_of(commands: Mapping[str, Any], modules: Mapping[str, str]) -> dict[str, Any]:
    """The table for these built commands (by name) of these modules."""
    return {"sources_sha256": sources_digest(modules.values()),
            "summaries": {name: summary_of(commands[name]) for name in modules}}


def summary_command(name: str, summary: str) -> TyperCommand:
    """A stand-in for the root help's list: the command's name and summary, nothing to run."""
    return TyperCommand(name=name, help=summary)
