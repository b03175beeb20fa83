"""A command group's commands, each built when it is first looked up: `check` builds `check`, `--version` builds
none, and `--help` (which lists them all) builds every one.

Typer turns every registered command into a Click command (reading each signature) when the app starts, so every
command used to import every command module: the scan's, batch's and lock's options for a `check`. The group's
`commands` mapping is the one place Typer and Click look commands up (by name, by iteration for --help and
"did you mean"), so making that mapping lazy leaves the parsing, the help and the errors as they were."""

from __future__ import annotations

from collections.abc import Callable, Iterator, Mapping, MutableMapping
from typing import Any

Build = Callable[[str], Mapping[str, Any]]


class LazyCommands(MutableMapping[str, Any]):
    """Commands by name, in the order `modules` lists them (then any added later): `modules` maps a command name to
    the module that registers it, and `build(module)` returns every command that module registers."""

    def __init__(self, modules: Mapping[str, str], build: Build, built: Mapping[str, Any] | None = None) -> None:
        self._modules = dict(modules)
        self._build = build
        self._built: dict[str, Any] = dict(built or {})

    def __getitem__(self, name: str) -> Any:
        if name not in self._built and name in self._modules:
            self._built.update(self._build(self._modules[name]))
        return self._built[name]

    def __setitem__(self, name: str, command: Any) -> None:
        self._built[name] = command

    def __delitem__(self, name: str) -> None:
        if name not in self:
            raise KeyError(name)
        self._modules.pop(name, None)
        self._built.pop(name, None)

    def __contains__(self, name: object) -> bool:
        return name in self._modules or name in self._built

    def __iter__(self) -> Iterator[str]:
        return iter(dict.fromkeys([*self._modules, *self._built]))

    def __len__(self) -> int:
        return len(dict.fromkeys([*self._modules, *self._built]))

    def loaded(self) -> list[str]:
        """The commands built so far (for tests: a command's run builds no other)."""
        return list(self._built)
