"""`mcp-sandbox fixtures DIR`: write the MCP 2026-07-28 wire fixtures and CHECKLIST.md (no Docker, no network).
scanner.fixtures is imported only when the command runs, so the CLI starts as fast as before."""

from __future__ import annotations

import sys
from pathlib import Path

import typer

from scanner.errors import UsageError

FIXTURE_REVISION = "2026-07-28"
DEFAULT_REVISION = "2025-11-25"  # scan's default: it needs no fixtures


def register(app: typer.Typer) -> None:
    app.command("fixtures")(fixtures)


def _revision(spec_version: str | None) -> None:
    if spec_version in (None, FIXTURE_REVISION):
        return
    if spec_version == DEFAULT_REVISION:
        raise UsageError(f"--spec-version {DEFAULT_REVISION} needs no fixtures (it is scan's default revision); the "
                         f"fixtures are for {FIXTURE_REVISION}, and CHECKLIST.md covers a server serving both")
    raise UsageError(f"--spec-version must be {FIXTURE_REVISION} (the revision the fixtures are written for), not "
                     f"{spec_version!r}")


def fixtures(
    directory: Path = typer.Argument(None, metavar="[DIR]", help="Folder to write into (created if missing; must be "
                                                                 "empty unless --force)."),
    spec_version: str | None = typer.Option(None, "--spec-version", metavar="REVISION",
                                            help=f"The protocol revision the fixtures are for ({FIXTURE_REVISION}, "
                                                 "the only one with fixtures, and the default here)."),
    form: str = typer.Option("json", "--format", metavar="FORMAT",
                             help="json (one document per scenario) or jsonl (one exchange a line)."),
    force: bool = typer.Option(False, "--force", help="Write into a folder that is not empty, overwriting the "
                                                      "fixture files of the same names (nothing else is touched)."),
    list_only: bool = typer.Option(False, "--list", help="Print each fixture (set/name, transport, title) and exit."),
) -> None:
    """Write the wire fixtures a server team replays in its own tests for MCP 2026-07-28, and CHECKLIST.md.

    One file per scenario (stateless/, http/, tasks/, notifications/, mrtr/), each a list of exchanges: direction
    (client→server or server→client), HTTP framing where it matters, the JSON-RPC message and what to expect; a
    README per set; CHECKLIST.md, the dual-revision rollout matrix (client old/new x server old/new x stdio/HTTP,
    with the fixture, vet rule and W rule of each cell). Ids are fixed and there are no live timestamps, so the
    bytes are the same on every run.

    Example: mcp-sandbox fixtures tests/mcp-fixtures, then replay each client→server message against your server
    and compare codes, resultType and shapes with the server→client ones. Exit 0, or 2 on bad input."""
    _revision(spec_version)
    from scanner.fixtures.catalogue import all_fixtures

    if list_only:
        for fixture in all_fixtures():
            print(f"{fixture.path}\t{fixture.transport}\t{fixture.title}")
        raise typer.Exit(0)
    if directory is None:
        raise UsageError("give the folder to write the fixtures into (mcp-sandbox fixtures DIR), or --list")
    from scanner.fixtures.writer import write_fixtures

    written = write_fixtures(directory, form, force)
    for path in written:
        print(path)
    print(f"wrote {len(written)} files into {directory}: {len(all_fixtures())} fixtures, a README per set and "
          "CHECKLIST.md", file=sys.stderr)
