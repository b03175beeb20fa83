"""The `mcp-sandbox` command line."""

from __future__ import annotations

from importlib import import_module
import os
import sys
from typing import TYPE_CHECKING, Any

import typer
# Typer vendors its own Click; its parse errors are these classes, not the `click` package's.
from typer._click import exceptions as cli_errors
from typer.core import TyperGroup

from sandbox.core.errors import SandboxError, UserInputError
from scanner.cli.interpreter import tune_interpreter
from scanner.cli.lazy_commands import LazyCommands
from scanner.cli.stdout_guard import guard_stdout
from scanner.errors import UsageError
from scanner.pipeline.interrupts import (INTERRUPTED_EXIT, caused_by_interrupt, forget_handled_interrupts,
                                         interrupted_line, keep_lost_interrupts)
from sandbox.core.untrusted import escape_for_terminal

if TYPE_CHECKING:
    from scanner.pipeline.head_start import HeadStart

# Every command, in --help order, and the module of scanner/cli whose `register(app)` adds it. A module is imported
# (and its commands built) only when one of its commands is looked up: running `check` imports no scan machinery,
# `--version` no command at all. (Each module also imports what its command needs inside the command: tree-sitter
# for vet, the scan machinery for batch.)
COMMANDS = {"check-config": "check_config", "check": "check", "lock": "lock", "keygen": "signing",
            "verify": "signing", "scan": "scan", "init-fixtures": "scan", "gc": "gc", "rules": "rules", "vet": "vet",
            "fixtures": "fixtures", "plugin": "plugin", "worker": "worker", "batch": "batch", "diff": "diff",
            "images": "scan"}
SETTINGS: dict[str, Any] = {"add_completion": False, "pretty_exceptions_enable": False,
                            "context_settings": {"help_option_names": ["-h", "--help"]}}  # -h: what users type first


def commands_of(module: str) -> dict[str, Any]:
    """The Click commands one module of scanner/cli registers, built as Typer builds the root's."""
    part = typer.Typer(**SETTINGS)
    import_module(f"scanner.cli.{module}").register(part)
    return dict(typer.main.get_group(part).commands)


class Commands(TyperGroup):
    """The root group, its commands built on first lookup (scanner.cli.lazy_commands); its own help lists them by
    their stored summaries (scanner.cli.command_summaries) rather than building every one."""

    def __init__(self, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.commands = LazyCommands(COMMANDS, commands_of, built=self.commands)

    def format_help(self, ctx: Any, formatter: Any) -> None:
        from scanner.cli.command_summaries import load_summaries, summary_command

        summaries = load_summaries(COMMANDS)
        lazy = self.commands
        if summaries is None or not isinstance(lazy, LazyCommands):
            super().format_help(ctx, formatter)
            return
        built = set(lazy.loaded())
        self.commands = {name: lazy[name] if name in built or name not in summaries
                         else summary_command(name, summaries[name]) for name in lazy}
        try:
            super().format_help(ctx, formatter)
        finally:
            self.commands = lazy


app = typer.Typer(
    name="mcp-sandbox",
    help="Vet an untrusted MCP server before you install it: install and run it in a throwaway, hardened Docker "
    "sandbox, read its tools, lint them, and report what it is.",
    no_args_is_help=True,
    cls=Commands,
    **SETTINGS,
)


def _version(value: bool) -> None:
    if value:
        from scanner import __version__

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
INTERNAL_ERROR_EXIT = 3  # as a scan that could not finish: never 1, which means "findings"


def _interrupted(early: HeadStart | None) -> int:
    """Exit 130 with the teardown's line: a head start no scan took (the interrupt came first) is closed for it."""
    if early is None:
        _fail(interrupted_line([]))
        return INTERRUPTED_EXIT
    early.close(ending=True)
    _fail(early.interrupted_line())
    return INTERRUPTED_EXIT


def _internal_error(exc: Exception) -> int:
    """A bug, not a finding: one line naming it and exit 3; `MCP_SANDBOX_DEBUG=1` re-raises for the traceback."""
    if os.environ.get(DEBUG_ENV, "") not in ("", "0"):
        raise exc
    _fail(f"error: internal error: {type(exc).__name__}: {exc} (please report this; set {DEBUG_ENV}=1 for the "
          "traceback)")
    return INTERNAL_ERROR_EXIT


def main(early: HeadStart | None = None) -> None:
    """Console entry point: user errors print one line and exit 2, a check that could not run exits 3, and so does
    an internal error (one line, no traceback): never a traceback, never the exit code of findings. `early`: a head
    start begun before the CLI was imported, for `scan` to adopt (scanner/cli/early_start.py); the caller closes it."""
    tune_interpreter()
    _skip_unused_optional_imports()
    guard_stdout()  # a reader that stops reading (`| head -1`) loses no file the command writes
    try:
        with keep_lost_interrupts():  # a Ctrl-C CPython would drop (in a weakref callback) is delivered again
            code = _run(early)
    except Exception as exc:  # noqa: BLE001 - the one top-level guard: whatever escaped is reported, not hidden
        code = _interrupted(early) if caused_by_interrupt(exc) else _internal_error(exc)
    forget_handled_interrupts()  # every interrupt has its exit code by now (130): none may end the process as -2
    sys.exit(code)


# Optional modules a dependency imports when it finds them installed, that no command of ours runs: httpx's own
# command-line client (`httpx._main`: rich's console, progress, syntax and table, and pygments' lexers, 45-80 ms of
# a scan's start-up, measured here). httpx's package falls back to a stub `main` when it cannot import it; a None in
# sys.modules is how Python makes an import fail (`import` raises ImportError), so the fallback is httpx's own.
UNUSED_OPTIONAL_MODULES = ("httpx._main",)


def _skip_unused_optional_imports() -> None:
    """Make the imports of UNUSED_OPTIONAL_MODULES fail at once, unless one was imported already."""
    for name in UNUSED_OPTIONAL_MODULES:
        sys.modules.setdefault(name, None)  # type: ignore[arg-type]


def _command_path(args: list[str]) -> str:
    """`mcp-sandbox COMMAND` for a parse error that names no command (Click raises "Option '--fail-on' requires an
    argument" without its context), so that the hint points at the command's --help, not the list of commands."""
    command = next((arg for arg in args if not arg.startswith("-")), None)
    return f"mcp-sandbox {command}" if command in COMMANDS else "mcp-sandbox"


def _run(early: HeadStart | None) -> int:
    """The app, with every expected way to stop turned into its exit code."""
    try:
        code = app(standalone_mode=False, obj=early)  # `scan` finds it as its context's obj
    except cli_errors.NoArgsIsHelpError as exc:
        print(exc.ctx.get_help() if exc.ctx else "", file=sys.stderr)
        code = 2
    except cli_errors.ClickException as exc:
        if not isinstance(exc, cli_errors.UsageError):
            _fail(f"error: {exc.format_message()}")
            return exc.exit_code
        command = exc.ctx.command_path if exc.ctx else _command_path(sys.argv[1:])
        _fail(f"error: {exc.format_message()} (see `{command} --help`)")
        code = 2
    except (UsageError, UserInputError) as exc:
        _fail(f"error: {exc}")
        code = 2
    except SandboxError as exc:  # includes EngineUnavailable: the scan could not run
        _fail(f"error: {exc}")
        code = 3
    except (KeyboardInterrupt, typer.Abort):
        code = _interrupted(early)
    return code if isinstance(code, int) else 0
