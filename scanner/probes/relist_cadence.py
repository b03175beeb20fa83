"""When the probe runner re-lists the tools (P8: definitions that change during the session), and what a change it
finds is said to have followed.

A server that lists up to `EVERY_CALL_UP_TO` tools is re-listed after every call, as it always was: a change is
charged to the one call before it. A bigger listing costs more to fetch and compare than the call it follows (a
3,000-tool server: about 0.8 s a re-list, 500 calls), so it is re-listed after every k-th call, k = tools / 100
rounded up (the cost per call of re-listing about 100 tools), and at once after a `notifications/tools/list_changed`,
and once more after the last call. A change found then is charged to the calls since the previous re-list, named
by the first and the last of them: attributed less narrowly, and a change that one call makes and a later call
undoes before the next re-list, with no list_changed notification, is not seen at all. A call whose looks end in a
restart (the server crashed, hung or can fork no more) is re-listed only when that re-list was fetched beside its
looks (an answered call of a small listing); the other calls not re-listed yet cannot be, in that server.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field

EVERY_CALL_UP_TO = 100  # tools: up to this many, a re-list after every call


def relist_every(tools: int) -> int:
    """After how many calls a listing of `tools` tools is re-listed."""
    return max(1, math.ceil(tools / EVERY_CALL_UP_TO))


@dataclass
class RelistCadence:
    calls: list[str] = field(default_factory=list)  # the calls since the last re-list ("probe 'x' of tool 'y'")
    notified: int = 0  # the list_changed notifications counted at the last re-list

    def after(self, call: str, *, tools: int, notifications: int) -> str | None:
        """Record one call; the `after_call` text of the re-list due now, or None when none is due."""
        self.calls.append(call)
        if notifications > self.notified or len(self.calls) >= relist_every(tools):
            return self.take(notifications)
        return None

    def pending(self, notifications: int) -> str | None:
        """The `after_call` text of a last re-list for the calls not re-listed yet, if any."""
        return self.take(notifications) if self.calls else None

    def drop(self) -> None:
        """The server is being replaced: its last calls can no longer be re-listed."""
        self.calls = []

    def take(self, notifications: int) -> str:
        calls, self.calls, self.notified = self.calls, [], notifications
        if len(calls) == 1:
            return calls[0]
        return f"one of the {len(calls)} probes since the last re-list, from {calls[0]} to {calls[-1]}"
