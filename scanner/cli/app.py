"""The `mcp-sandbox` command line."""

from __future__ import annotations

from gc import set_threshold as set_gc_threshold
import os
import sys

import typer
# Typer vendors its own Click; its parse errors are these classes, not the `click` package's.
from typer._click import exceptions as cli_errors

from sandbox.core.errors import SandboxError, UserInputError
from scanner import __version__
from scanner.errors import UsageError
from sandbox.core.untrusted import escape_for_terminal

app = typer.Typer(
    name="mcp-sandbox",
    help="Vet an untrusted MCP server before you install it: install and run it in a throwaway, hardened Docker "
    "sandbox, read its tools, lint them, and report what it is.",
    no_args_is_help=True,
    add_completion=False,
    pretty_exceptions_enable=False,
)


def _version(value: bool) -> None:
    if value:
        print(f"mcp-sandbox {__version__}")
        raise typer.Exit(0)


@app.callback()
def _root(
    version: bool = typer.Option(False, "--version", callback=_version, is_eager=True, help="Print the version."),
) -> None:
    """Vet an untrusted MCP server before you install it."""


def _fail(message: str) -> None:
    """One line on stderr, never wrapped, with control characters shown as escapes."""
    print(escape_for_terminal(" ".join(message.split()), limit=1_000), file=sys.stderr)


DEBUG_ENV = "MCP_SANDBOX_DEBUG"
# The cyclic collector's thresholds for one command: a command builds many objects that live until it ends (the
# imported modules, a tool list's views and findings) and few cycles, so the default (700, 10, 10) spends a third of a
# large `check` re-walking them (measured: 11.0 s against 8.3 s of CPU for 50,000 tools). Every cycle is still
# collected, only less often.
GC_THRESHOLDS = (100_000, 50, 100)
INTERNAL_ERROR_EXIT = 3  # as a scan that could not finish: never 1, which means "findings"


def _internal_error(exc: Exception) -> int:
    """A bug, not a finding: one line naming it and exit 3; `MCP_SANDBOX_DEBUG=1` re-raises for the traceback."""
    if os.environ.get(DEBUG_ENV, "") not in ("", "0"):
        raise exc
    _fail(f"error: internal error: {type(exc).__name__}: {exc} (please report this; set {DEBUG_ENV}=1 for the "
          "traceback)")
    return INTERNAL_ERROR_EXIT


def main() -> None:
    """Console entry point: user errors print one line and exit 2, a check that could not run exits 3, and so does
    an internal error (one line, no traceback): never a traceback, never the exit code of findings."""
    set_gc_threshold(*GC_THRESHOLDS)
    try:
        code = _run()
    except Exception as exc:  # noqa: BLE001 - the one top-level guard: whatever escaped is reported, not hidden
        code = _internal_error(exc)
    sys.exit(code)


def _run() -> int:
    """The app, with every expected way to stop turned into its exit code."""
    try:
        code = app(standalone_mode=False)
    except cli_errors.NoArgsIsHelpError as exc:
        print(exc.ctx.get_help() if exc.ctx else "", file=sys.stderr)
        code = 2
    except cli_errors.ClickException as exc:
        if not isinstance(exc, cli_errors.UsageError):
            _fail(f"error: {exc.format_message()}")
            return exc.exit_code
        command = exc.ctx.command_path if exc.ctx else "mcp-sandbox"
        _fail(f"error: {exc.format_message()} (see `{command} --help`)")
        code = 2
    except (UsageError, UserInputError) as exc:
        _fail(f"error: {exc}")
        code = 2
    except SandboxError as exc:  # includes EngineUnavailable: the scan could not run
        _fail(f"error: {exc}")
        code = 3
    except (KeyboardInterrupt, typer.Abort):
        _fail("interrupted; the sandbox was torn down")
        code = 130
    return code if isinstance(code, int) else 0


# --- command registration (each module of scanner/cli adds its commands) ---
# (each imports what its command needs inside the command: tree-sitter for vet, the scan machinery for batch)
from scanner.cli import (batch, check, check_config, diff, fixtures, gc, lock, plugin, rules, scan, signing,  # noqa: E402
                         vet, worker)

for _module in (check_config, check, lock, signing, scan, gc, rules, vet, fixtures, plugin, worker):
    _module.register(app)
app.command("batch")(batch.batch)
app.command("diff")(diff.diff)
