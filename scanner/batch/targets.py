"""One target of a batch: what to scan (the `scan` TARGET, a launch command, server arguments), where in the input
it came from, and its identity in the store (the key a rerun finds it by)."""

from __future__ import annotations

import json
from dataclasses import dataclass

from scanner.errors import UsageError
from scanner.pipeline.targets import parse_target


@dataclass(frozen=True)
class BatchTarget:
    """`target` is the `scan` TARGET (a local path made absolute); `unsupported` says why an entry is recorded but
    never scanned (an OCI image, a remote server, an entry the input describes badly)."""

    target: str
    command: str | None = None
    server_args: tuple[str, ...] = ()
    origin: str = ""
    unsupported: str | None = None

    @property
    def key(self) -> str:
        """The row's identity: the same target, command and arguments are the same row on every rerun."""
        return json.dumps([self.target, self.command, list(self.server_args)], ensure_ascii=True)

    @property
    def display(self) -> str:
        """The target as a line of the text input would give it (for progress lines and the summary)."""
        words = [self.target]
        if self.command:
            words += ["--command", self.command]
        if self.server_args:
            words += ["--", *self.server_args]
        return " ".join(words)


def unpassable(words: tuple[str, ...] | list[str]) -> str | None:
    """Why these words cannot be a process's arguments (None when they can): a NUL character ends a C string, so no
    argument can hold one. Refused at input, with the reason, not found out when the scan's process is started."""
    if any("\x00" in word for word in words):
        return "an argument holds a NUL character, which no process argument can carry"
    return None


def registry_release(target: str, ecosystem: str | None, name: str | None) -> bool:
    """Whether a row of `target` whose report says (ecosystem, name) is a release of that registry package: only a
    registry target (npm:, pypi:) of that very package. A folder's or an archive's name and version are what its own
    manifest claims, so its row never stands for a registry release (vetted, or a registry target's baseline)."""
    if not target.startswith(("npm:", "pypi:")):
        return False
    try:
        parsed = parse_target(target)
    except UsageError:
        return False
    return parsed.ecosystem == ecosystem and parsed.name == name


def at_latest(target: BatchTarget) -> BatchTarget:
    """The same registry package without its version, so the scan resolves the newest one (`--latest`); local
    targets and unsupported entries are as they were."""
    if target.unsupported or not target.target.startswith(("npm:", "pypi:")):
        return target
    parsed = parse_target(target.target)
    return BatchTarget(f"{parsed.kind}:{parsed.name}", target.command, target.server_args, target.origin)


def unique(targets: list[BatchTarget]) -> list[BatchTarget]:
    """The targets in input order, each key once: the first occurrence wins, unless it is unsupported and a later
    one of the same key can be scanned (a registry entry listing its package for streamable-http, then for stdio)."""
    seen: dict[str, BatchTarget] = {}
    for target in targets:
        earlier = seen.get(target.key)
        if earlier is None or earlier.unsupported and not target.unsupported:
            seen[target.key] = target  # an existing key keeps its place in the order
    return list(seen.values())
