"""Which call stopped the server: the one that was running when it died, or one just before it.

A tool can answer and then stop the server (a kill tool sent the init's pid; an exit scheduled after the reply): the
runner sees the container still running after that call and finds it gone only when a later call gets no answer.
The engine records when the container finished (`State.FinishedAt`), and the runner when each call was sent and
answered. The calls that may have done it (`suspects`) are the one out when the server ended (or, when none was,
the last one answered) and every call whose answer came less than EXIT_AFTER_ANSWER_SECONDS before the end, whatever
its tool's annotations say: `readOnlyHint` is the server's own word, and a hostile server's read-only tool may be the
one that stops it (so that the crash is charged to an innocent call). One suspect is P6's at once; more are sent
again to the restarted server, one at a time, each given that long after its answer, and the first that stops it is
P6's (scanner/probes/crash_replay.py).

The next call goes out as soon as the looks after the last one are done (a few milliseconds with the in-sandbox
observer). The scan used to wait 40 ms after every answer to a tool not annotated read-only, so that an exit
scheduled after a reply landed before the next call: it cost every such call 40 ms, and covered only exits sooner
than that. Now only a crash costs: the calls sent again."""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from docker.errors import APIError, NotFound

from scanner.probes.model import ProbeCall

SLOP_SECONDS = 0.005  # the engine and the scanner read one host clock; this covers rounding, not skew
_FRACTION = re.compile(r"(\.\d{1,6})\d*")


def parse_engine_time(text: Any) -> float | None:
    """An engine timestamp (RFC 3339 with nanoseconds, `Z`) as epoch seconds; None for the zero time or junk."""
    if not isinstance(text, str) or text.startswith("0001-"):
        return None
    try:
        return datetime.fromisoformat(_FRACTION.sub(r"\1", text, count=1).replace("Z", "+00:00")).timestamp()
    except ValueError:
        return None


def finished_at(docker: Any, container_id: str) -> float | None:
    """When the engine says the container's process ended (epoch seconds), or None when it cannot tell."""
    try:
        state = docker.api.inspect_container(container_id).get("State") or {}
    except (APIError, NotFound):
        return None
    return parse_engine_time(state.get("FinishedAt"))


EXIT_AFTER_ANSWER_SECONDS = 0.25  # an exit this soon after a call's answer may be that call's doing
MAX_SUSPECTS = 5  # the latest: each sent again costs at least EXIT_AFTER_ANSWER_SECONDS


@dataclass(frozen=True)
class Answered:
    """A call this sandbox's server answered, and when (epoch seconds)."""

    call: ProbeCall
    at: float


def recent(answered: Sequence[Answered], now: float) -> list[Answered]:
    """The answers a crash from `now` on could still suspect (the runner keeps no more)."""
    return [a for a in answered if now - a.at < EXIT_AFTER_ANSWER_SECONDS]


def suspects(answered: Sequence[Answered], noticing: ProbeCall, sent_at: float,
             finished: float | None) -> list[ProbeCall]:
    """The calls that may have stopped a server found dead by `noticing` (sent at `sent_at`; `finished`: when the
    engine says the server ended), in the order sent: the noticing call when the server was still running when it
    was sent, else the last call answered; and every call answered within EXIT_AFTER_ANSWER_SECONDS before the end
    (read-only annotations or not) (a call that timed out counts as answered when it timed out); the latest
    MAX_SUSPECTS of them. One suspect is P6's; more are sent again to decide (crash_replay)."""
    if finished is None:
        return [noticing]
    out = not died_before_sending(finished, sent_at)
    found = [a.call for a in answered if finished - a.at < EXIT_AFTER_ANSWER_SECONDS]
    if answered and not out and all(call is not answered[-1].call for call in found):
        found.append(answered[-1].call)
    if out or not found:
        found.append(noticing)
    return found[-MAX_SUSPECTS:]


def died_before_sending(finished: float | None, sent_at: float) -> bool:
    """The server had already exited when the call was sent (so an earlier call stopped it)."""
    return finished is not None and finished < sent_at - SLOP_SECONDS
