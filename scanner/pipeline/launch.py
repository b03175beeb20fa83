"""Choose the command that starts the server inside the sandbox."""

from __future__ import annotations

import shlex

from sandbox.core.errors import UserInputError


def choose_command(package: str, entry_points: dict[str, str], override: str | None, server_args: list[str]) -> list[str]:
    """The launch command: --command if given, else the package's only (or same-named) bin / console script."""
    if override is not None:
        try:
            command = shlex.split(override)
        except ValueError as exc:
            raise UserInputError(f"--command {override!r} cannot be parsed: {exc}") from None
        if not command:
            raise UserInputError("--command is empty; give the program to run, e.g. --command 'my-server --stdio'")
        return [*command, *server_args]
    if not entry_points:
        raise UserInputError(
            f"{package} installs no command (no npm bin, no console script); pass --command 'PROGRAM ARGS'"
        )
    if len(entry_points) == 1:
        return [next(iter(entry_points.values())), *server_args]
    preferred = _normal(package.split("/")[-1])
    for name, path in entry_points.items():
        if _normal(name) == preferred:
            return [path, *server_args]
    raise UserInputError(f"{package} installs several commands; choose one with --command NAME: {_listed(entry_points)}")


def _listed(entry_points: dict[str, str], shown: int = 20) -> str:
    """The commands' names, the first `shown` (sorted) and how many more: the error line is capped, and what to do
    comes first, so a package with many commands cannot push it out of the line."""
    names = sorted(entry_points)
    more = f" and {len(names) - shown} more" if len(names) > shown else ""
    return ", ".join(names[:shown]) + more


def _normal(name: str) -> str:
    return "".join(ch for ch in name.lower() if ch.isalnum())
