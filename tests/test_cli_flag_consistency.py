"""A flag means the same on every command that takes it: the same value it takes (metavar, type), the same kind of
switch, and the shared config / report options on every command that reports findings."""

from __future__ import annotations

from collections import defaultdict

from typing import Any

import pytest
import typer

from scanner.cli.app import app

# Deliberate differences, with why: lock --check gates on a change at warning (a re-pinned description is a change),
# every finding-reporting command at error; `lock` needs a lockfile, so --lock names one by default, where scan and
# verify write or check one only when asked.
DEFAULTS_THAT_DIFFER = {"--fail-on", "--lock"}
REPORTING = ("check", "check-config", "scan")


def _commands() -> dict[str, Any]:
    """Every command and sub-command (typer vendors its own Click: its classes are compared by shape)."""
    root = typer.main.get_command(app)
    found: dict[str, Any] = {}
    for name, command in root.commands.items():  # type: ignore[attr-defined]
        if hasattr(command, "commands"):
            found.update({f"{name} {sub}": c for sub, c in command.commands.items()})
        else:
            found[name] = command
    return found


def _value_type(param: Any) -> str:
    """The annotation of the value, optional or not (`Path | None` takes what `Path` takes); typer before 0.29 keeps
    no annotation on the parameter, only Click's type, which says the same for this comparison."""
    descriptor = getattr(param, "type_descriptor", None)
    if descriptor is None:
        return f"{type(param.type).__name__} {getattr(param.type, 'name', '')} {getattr(param.type, 'choices', '')}"
    return str(descriptor.annotation).replace(" | None", "").replace("typing.Optional", "")


def _options() -> dict[str, dict[str, Any]]:
    by_flag: dict[str, dict[str, Any]] = defaultdict(dict)
    for name, command in _commands().items():
        for param in command.params:
            if param.param_type_name == "option":
                for flag in param.opts:
                    by_flag[flag][name] = param
    return by_flag


def test_a_flag_takes_the_same_kind_of_value_on_every_command() -> None:
    different = []
    for flag, commands in _options().items():
        shapes = {(p.metavar, p.is_flag, p.multiple, _value_type(p)) for p in commands.values()}
        defaults = {repr(p.default) for p in commands.values()}
        if len(shapes) > 1 or (len(defaults) > 1 and flag not in DEFAULTS_THAT_DIFFER):
            different.append(f"{flag}: " + "; ".join(f"{c} {p.metavar} {_value_type(p)} default={p.default!r}"
                                                     for c, p in sorted(commands.items())))
    assert different == []


def test_every_command_that_reports_findings_takes_the_config_and_report_options() -> None:
    options = _options()
    shared = ["--config", "--json", "--sarif", "--markdown", "--fail-on", "--min-severity", "--quiet",
              "--github-annotations"]
    missing = [f"{command} lacks {flag}" for command in REPORTING for flag in shared if command not in options[flag]]
    assert missing == []
    assert len({options["--config"][c].help for c in REPORTING}) == 1  # one help text: one meaning


def test_every_argument_is_named_as_the_help_names_it() -> None:
    """A positional without a metavar showed as `{files}...`, `{envelope}`, `[target]`, and the error as
    "Missing argument 'files'", where every other command writes FILE, DIR, TARGET."""
    unnamed = [f"{name} {p.name}" for name, command in _commands().items() for p in command.params
               if p.param_type_name == "argument" and not p.metavar]
    assert unnamed == []


def test_every_command_with_a_gate_says_its_exit_codes_in_its_help() -> None:
    gated = [name for name, options in ((n, {o for p in c.params for o in p.opts}) for n, c in _commands().items())
             if "--fail-on" in options]
    assert sorted(gated) == ["batch", "check", "check-config", "diff", "lock", "scan", "vet"]
    silent = [name for name in gated if "Exit" not in (_commands()[name].help or "")]
    assert silent == []


def test_a_group_offers_only_what_it_has() -> None:
    """`images --help` read "Build or list the runtime images" with `build` its only command."""
    images = typer.main.get_command(app).commands["images"]  # type: ignore[attr-defined]
    assert list(images.commands) == ["build"] and " list " not in f" {images.help} "



def test_minus_h_is_help_on_every_command(monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    """`mcp-sandbox check -h` said "No such option: -h"."""
    from tests.cli_helpers import run_main

    refused = []
    for name in ["", *_commands()]:
        code, out, _ = run_main(monkeypatch, capsys, *name.split(), "-h")
        if code != 0 or "Usage" not in out:
            refused.append(name)
    assert refused == []
