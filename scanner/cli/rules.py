"""`mcp-sandbox rules`: a table of every rule of every family, from the one registry; `--json` writes it as JSON.
(The registry and rich are imported when the command runs.)"""

from __future__ import annotations

from typing import TYPE_CHECKING

import typer

from scanner.cli.output import STDOUT, OutputPath, check_writable, refuse_one_file_twice, write_json, write_text
from scanner.errors import UsageError

if TYPE_CHECKING:
    from rich.table import Table

    from scanner.rules.model import Rule


def register(app: typer.Typer) -> None:
    app.command("rules")(rules)


def rules(
    family: str | None = typer.Option(None, "--family", metavar="FAMILY",
                                      help="Only one family: S (static), P (probe), B (behaviour), I (provenance), "
                                           "FX (fixture), W (wire conformance), V (vetted source)."),
    json_path: str | None = typer.Option(None, "--json", metavar="PATH|-", help="Write the rules as JSON (- for "
                                                                              "stdout)."),
    markdown_path: str | None = typer.Option(None, "--markdown", metavar="PATH|-",
                                             help="Write the rules as a Markdown table (- for stdout)."),
) -> None:
    """List every rule the scanner can report: id, name, default severity, family, category and why it matters.

    `mcp-sandbox check --explain ID` prints one rule's full docs; config `disable`/`ignore` take the same ids.
    """
    from rich.console import Console

    from scanner.rules.docs import as_json, markdown_table

    chosen = select(family)
    if json_path == STDOUT and markdown_path == STDOUT:
        raise UsageError("--json - and --markdown - both want standard output; give one of them a file")
    targets: list[OutputPath] = [(json_path, "the JSON rules"), (markdown_path, "the Markdown table")]
    for target, what in targets:  # both before either is written: a bad second path must not leave the first new
        check_writable(target, what)
    refuse_one_file_twice(targets)
    if json_path is not None:
        write_json(json_path, [as_json(rule) for rule in chosen], "the rules")
    if markdown_path is not None:
        write_text(markdown_path, markdown_table(chosen), "the rules")
    if STDOUT not in (json_path, markdown_path):
        Console(highlight=False, soft_wrap=False, emoji=False).print(table(chosen))


def select(family: str | None) -> list[Rule]:
    """The rules of one family (given by its prefix, any case), or all of them."""
    from scanner.rules.model import Family
    from scanner.rules.registry import ALL_RULES

    if family is None:
        return list(ALL_RULES)
    try:
        wanted = Family(family.strip().upper())
    except ValueError:
        raise UsageError(f"--family must be one of {', '.join(Family)}, not {family!r}") from None
    return [rule for rule in ALL_RULES if rule.family is wanted]


def table(chosen: list[Rule]) -> Table:
    """One row per rule, a section per family (the id's prefix names it)."""
    from rich import box
    from rich.table import Table
    from rich.text import Text

    from scanner.report.terminal import SEVERITY_STYLE

    view = Table(title=f"{len(chosen)} rules", title_justify="left", box=box.SIMPLE_HEAD)
    view.add_column("id", no_wrap=True)
    view.add_column("name", overflow="fold")  # folds only on a narrow terminal, to leave room for the why
    view.add_column("severity", no_wrap=True)
    view.add_column("category", no_wrap=True)
    view.add_column("why", ratio=1)
    for index, rule in enumerate(chosen):
        if index and rule.family is not chosen[index - 1].family:
            view.add_section()
        view.add_row(Text(rule.id), Text(rule.name), Text(rule.severity, style=SEVERITY_STYLE[rule.severity]),
                     Text(rule.category), Text(rule.why))
    return view

