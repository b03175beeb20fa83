"""What went wrong on the wire of the probe phase's sessions that no call's result says. The first sandbox's session is
the listing's: its noise and stray answers reach the report with the served definitions (scanner.pipeline.served).
Each restart (after a crash or a hang; the suspects of a crash sent again: crash_replay) opens a session of its own,
whose lines that are not JSON-RPC, answers the client dropped unread, and reason the stream ended are said here the
same way, one line each, naming the restart: dropped with its session, a server could misbehave only once restarted
and the scan would read complete.

A re-list's page (any session's) loses the tools the MCP schema rejects to the transport (scanner.pipeline.transport),
so P8 compares only the rest: a tool added after a call in a form the SDK rejects (a lenient client may take it) is
said here too, when it is not one the first listing served (those are linted with the listing). Each re-list's are
taken off its session's WireHealth once looked at, so the same tools re-listed call after call never fill its bound
and hide a later one."""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Any

from sandbox.core.untrusted import cap_text
from scanner.pipeline.transport import WireHealth
from scanner.pipeline.wire_reader import RejectedTool

MAX_LINE_CHARS = 1100
MAX_ADDED = 20


@dataclass
class ProbeSessions:
    """The listing session's wire health (`first`, also the probes' until a restart) and every restarted session's,
    in order (the first is restart 1)."""

    first: WireHealth
    listed: list[Any] = field(default_factory=list)  # the tools the first listing served that the schema rejects
    listed_count: int = 0  # how many of `first.rejected_tools` the listing kept
    restarted: list[WireHealth] = field(default_factory=list)
    added: list[RejectedTool] = field(default_factory=list)  # rejected in a re-list, not the listing's (bounded)
    added_count: int = 0

    @classmethod
    def listed_by(cls, first: WireHealth) -> ProbeSessions:
        """The sessions of a probe phase that begins now, after the listing on `first`."""
        kept = list(first.rejected_tools)
        return cls(first, [tool.definition for tool in kept], len(kept))

    def relisted(self, health: WireHealth) -> None:
        """After a re-list on `health` (the session in use): the tools its pages lost to the schema that the first
        listing did not serve are kept here, and taken off `health`, so its bound (MAX_REJECTED_TOOLS) is never
        filled by the same tools re-listed call after call."""
        start = self.listed_count if health is self.first else 0
        for tool in health.rejected_tools[start:]:
            if not any(_same(tool.definition, seen) for seen in [*self.listed, *(t.definition for t in self.added)]):
                self.added_count += 1
                if len(self.added) < MAX_ADDED:
                    self.added.append(tool)
        del health.rejected_tools[start:]

    def new(self) -> WireHealth:
        """The wire health of the session a restart opens now."""
        health = WireHealth()
        self.restarted.append(health)
        return health

    def errors(self, said: list[str]) -> list[str]:
        """The phase's error lines for what went wrong on these sessions' wires; a stream's end already in `said`
        (the call it ended, or the restart it failed, named it) is not said again."""
        lines: list[str] = []
        for health in (self.first, *self.restarted):  # a tools/list no re-list applied (a hung call's check)
            self.relisted(health)
        for restart, health in enumerate(self.restarted, start=1):
            problems = health.problems()
            if health.fault and all(health.fault not in line for line in [*said, *lines]):
                problems.append(health.fault)
            lines.extend(cap_text(f"probing (after restart {restart}): {problem}", MAX_LINE_CHARS)
                         for problem in problems)
        return [*lines, *self._rejected_in_relists()]

    def _rejected_in_relists(self) -> list[str]:
        if not self.added:
            return []
        first = self.added[0]
        name = first.definition.get("name") if isinstance(first.definition, dict) else None
        named = cap_text(json.dumps(name), 80) if isinstance(name, str) else "no name"
        count = f"{len(self.added)}{' or more' if self.added_count > len(self.added) else ''}"
        return [f"probing: a re-list served {count} tools the MCP schema rejects that were not in the "
                f"first listing (first: {named}, {first.problem}); P8 compares only the "
                "tools the schema accepts, so a definition a lenient client reads went unchecked"]


def _same(definition: Any, other: Any) -> bool:
    """The same definition; told apart by name first (no deep comparison of two tools named apart)."""
    if isinstance(definition, dict) and isinstance(other, dict) and definition.get("name") != other.get("name"):
        return False
    return bool(definition == other)
