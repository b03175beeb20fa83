"""What the servers the probe runner started after a crash or a hang did on the wire. The first sandbox's session is
the listing's: its WireHealth reaches the report with the served definitions (scanner.pipeline.served). Each restart
opens a session of its own (the rest of the probes, and the suspects of a crash sent again: crash_replay), and what
went wrong on its wire (lines that are not JSON-RPC, answers the client dropped unread, the reason the stream ended)
is said here the same way, one line each, naming the restart: dropped with its session, a server could answer
differently only once it was restarted and the scan would read complete."""

from __future__ import annotations

from dataclasses import dataclass, field

from sandbox.core.untrusted import cap_text
from scanner.pipeline.transport import WireHealth

MAX_LINE_CHARS = 1100


@dataclass
class RestartedSessions:
    """The wire health of every session the runner opened after a restart, in order (the first is restart 1)."""

    healths: list[WireHealth] = field(default_factory=list)

    def new(self) -> WireHealth:
        """The wire health of the session a restart opens now."""
        health = WireHealth()
        self.healths.append(health)
        return health

    def errors(self, said: list[str]) -> list[str]:
        """The phase's error lines for what went wrong on these sessions' wires; a stream's end already in `said`
        (the call it ended, or the restart it failed, named it) is not said again."""
        lines: list[str] = []
        for restart, health in enumerate(self.healths, start=1):
            problems = health.problems()
            if health.fault and all(health.fault not in line for line in [*said, *lines]):
                problems.append(health.fault)
            lines.extend(cap_text(f"probing (after restart {restart}): {problem}", MAX_LINE_CHARS)
                         for problem in problems)
        return lines
