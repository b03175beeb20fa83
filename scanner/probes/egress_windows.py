"""Which probe record an egress attempt belongs to: the one whose window holds the time the sink accepted it.

The sink logs a DNS query or UDP datagram when it arrives, but a TCP connection only once it read its first bytes
(up to ~2 s later), stamped with the time it was accepted. So what one drain hands out is not what the call just
looked at did: a late line may be an earlier call's. Each record has a window, from the moment its call was sent
(the start-up record's from the sandbox's start) to the next window's start; every drained attempt goes to the record
whose window holds its `ts`, however late it was drained. The drain therefore need not wait after a call for a slow
connection to be logged (scanner.probes.call_looks), and what the runner's last drain does not see is the scan's
"outside any probe call" (scanner.pipeline.scan), as before.

Sink and scanner share one clock: the containers run on the host's kernel, and both stamp with `time.time()`.
"""

from __future__ import annotations

from bisect import bisect_right
from typing import Any

from sandbox.core.untrusted import cap_json
from sandbox.run.canaries import find_canaries
from scanner.report.model import CallBehavior, CanaryEvent

MAX_EGRESS_PER_RECORD = 100

Events = list[dict[str, Any]] | Exception | None  # None: the network is not observed


class EgressWindows:
    """The windows of one probe phase, in order; `place` puts drained attempts into their records."""

    def __init__(self, behavior: list[CallBehavior], canaries: dict[str, str], errors: list[str]) -> None:
        self.behavior = behavior  # the outcome's records, in window order (the runner appends, this may insert)
        self.canaries = canaries
        self.errors = errors
        self._starts: list[float] = []
        self._records: list[CallBehavior] = []

    def open(self, record: CallBehavior, start: float) -> None:
        """A new window from `start` (a time.time() value, or -inf for the first sandbox's start-up) for `record`."""
        self._starts.append(start)
        self._records.append(record)

    def place(self, events: Events, pending: CallBehavior | None = None) -> None:
        """Each attempt into the record whose window holds its `ts` (before the first window: the first). A record
        that was not kept (a start-up record with nothing in it) is kept now, in its place, unless it is `pending`
        (the record the caller is still filling, and keeps or not itself)."""
        if events is None or not self._records:
            return
        if isinstance(events, Exception):
            self.errors.append(f"could not read the egress log: {events}"[:300])
            return
        for event in events:
            ts = event.get("ts")
            at = bisect_right(self._starts, ts if isinstance(ts, (int, float)) else float("inf")) - 1
            record = self._records[max(at, 0)]
            if len(record.egress) < MAX_EGRESS_PER_RECORD:
                record.egress.append(cap_json(event, max_string=2_000))
            for hit in find_canaries(str(event.get("first_bytes") or event.get("data") or ""), self.canaries):
                record.canaries.append(CanaryEvent(where=hit.where, how="egress", encoding=hit.encoding))
            if record is not pending and not any(kept is record for kept in self.behavior):
                self._keep(record)

    def _keep(self, record: CallBehavior) -> None:
        """A start-up record put back before its sandbox's calls (the records are in sandbox, then call order)."""
        key = (record.sandbox, record.call >= 0, record.call)
        at = next((index for index, kept in enumerate(self.behavior)
                   if (kept.sandbox, kept.call >= 0, kept.call) > key), len(self.behavior))
        self.behavior.insert(at, record)


def canaries_in_response(record: CallBehavior, text: str, canaries: dict[str, str]) -> None:
    for hit in find_canaries(text, canaries):
        record.canaries.append(CanaryEvent(where=hit.where, how="response", encoding=hit.encoding))
