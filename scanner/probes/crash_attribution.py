"""Which call stopped the server: the one that was running when it died, or the one just before it.

A tool can answer and then stop the server (a kill tool sent the init's pid; an exit scheduled after the reply): the
runner sees the container still running after that call and finds it gone only when the next call gets no answer.
The engine records when the container finished (`State.FinishedAt`); a server that had finished before the next
call was sent was stopped by the call before it, and P6 names that one.

That needs the next call to wait for what the last one set off: the looks after a call take a few milliseconds now
(the in-sandbox observer), less than a server takes to act on an exit it scheduled after its reply. So the next call
is sent no sooner than SETTLE_SECONDS after the last answer, unless the last tool is annotated read-only (it is not
expected to stop anything; if it did, P6 names the call that noticed, and says so). The old looks (~40 ms) gave this
time by accident."""

from __future__ import annotations

import re
from datetime import datetime
from typing import Any

from docker.errors import APIError, NotFound

SLOP_SECONDS = 0.005  # the engine and the scanner read one host clock; this covers rounding, not skew (the
# observer makes the looks after a call fast enough that a server stopping 20 ms after its answer has finished only
# 30 ms before the next call is sent)
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


SETTLE_SECONDS = 0.04  # a reply-then-exit (the zoo's shutdown_worker exits 20 ms after answering) lands before


def settle_remaining(answered_at: float | None, definition: dict[str, Any] | None, now: float) -> float:
    """Seconds still to wait before the next call is sent: what is left of SETTLE_SECONDS since the last answer
    (monotonic clock); nothing after a tool `definition` annotated read-only, or when there was no answer."""
    if answered_at is None or is_read_only(definition):
        return 0.0
    return max(0.0, answered_at + SETTLE_SECONDS - now)


def is_read_only(definition: dict[str, Any] | None) -> bool:
    """The tool's own annotation says it only reads (readOnlyHint: true); anything else may change state."""
    annotations = (definition or {}).get("annotations")
    return isinstance(annotations, dict) and annotations.get("readOnlyHint") is True


def died_before_sending(finished: float | None, sent_at: float) -> bool:
    """The server had already exited when the call was sent (so an earlier call stopped it)."""
    return finished is not None and finished < sent_at - SLOP_SECONDS
