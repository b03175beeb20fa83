"""Which probe record an egress attempt belongs to: the one whose window holds the time the sink accepted it.

The sink logs a DNS query or UDP datagram when it arrives, but a TCP connection only once it read its first bytes
(up to ~2 s later), stamped with the time it was accepted. So what one drain hands out is not what the call just
looked at did: a late line may be an earlier call's. Each record has a window, from the moment its call was sent
(the start-up record's from the sandbox's start) to the next window's start; every drained attempt goes to the record
whose window holds its `ts`, however late it was drained. The drain therefore need not wait after a call for a slow
connection to be logged (scanner.probes.call_looks), and what the runner's last drain does not see is the scan's
"outside any probe call" (scanner.pipeline.scan), as before.

Sink and scanner share one clock: the containers run on the host's kernel, and both stamp with `time.time()`.

A record keeps up to MAX_EGRESS_PER_RECORD attempts, and past that each attempt to a host it holds none of yet, up to
MAX_DESTINATIONS_PER_RECORD: a flood of lookups of one name cannot push a later attempt to another host out of the
record (B2 groups by host). Every attempt is searched for canaries, kept or not; an attempt to a new host dropped
past the second cap is counted, and said once in the scan's errors (`finish`).
"""

from __future__ import annotations

from bisect import bisect_right
from functools import lru_cache
from typing import Any

from sandbox.core.untrusted import cap_json
from sandbox.run.canary_search import CanaryHit, find_canaries
from scanner.report.model import AFTER_LAST_CALL, CallBehavior, CanaryEvent, Finding
from scanner.rules.behavior import check_canaries
from scanner.rules.egress import host_of

MAX_EGRESS_PER_RECORD = 100  # then only attempts to a host the record holds none of yet
MAX_DESTINATIONS_PER_RECORD = 1_000

Events = list[dict[str, Any]] | Exception | None  # None: the network is not observed


class EgressWindows:
    """The windows of one probe phase, in order; `place` puts drained attempts into their records."""

    def __init__(self, behavior: list[CallBehavior], canaries: dict[str, str], errors: list[str]) -> None:
        self.behavior = behavior  # the outcome's records, in window order (the runner appends, this may insert)
        self.canaries = canaries
        self.errors = errors
        self._starts: list[float] = []
        self._records: list[CallBehavior] = []
        self.dropped: dict[str, int] = {}  # attempts to a new destination not kept, by the record's call
        self._hosts: dict[int, set[tuple[str, Any]]] = {}  # a full record's destinations (by id: kept alive here)

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
            self._keep_event(record, event)
            for hit in find_canaries(_searched(event), self.canaries):
                record.canaries.append(CanaryEvent(where=hit.where, how="egress", encoding=hit.encoding))
            if record is not pending and not any(kept is record for kept in self.behavior):
                self._keep(record)

    def finish(self) -> None:
        """The scan's error line for attempts to new hosts that were not kept, if any."""
        if self.dropped:
            where = ", ".join(f"{count} during {label}" for label, count in list(self.dropped.items())[:3])
            self.errors.append(f"egress attempts to hosts not reported (over {MAX_DESTINATIONS_PER_RECORD} attempts "
                               f"in one call's record): {where}; B2 may miss their hosts"[:600])

    def _keep_event(self, record: CallBehavior, event: dict[str, Any]) -> None:
        """Into the record, unless it holds MAX_EGRESS_PER_RECORD already and this host among them (a repeat is
        not needed to report the host) or holds MAX_DESTINATIONS_PER_RECORD (counted: `finish` says it)."""
        held = len(record.egress)
        if held >= MAX_EGRESS_PER_RECORD:
            hosts = self._hosts.setdefault(id(record), {_destination(kept) for kept in record.egress})
            host = _destination(event)
            if host in hosts:
                return
            if held >= MAX_DESTINATIONS_PER_RECORD:
                call = f"probe '{record.label}' of '{record.tool}'" if record.tool else record.label
                self.dropped[call] = self.dropped.get(call, 0) + 1
                return
            hosts.add(host)
        record.egress.append(cap_json(event, max_string=2_000))

    def _keep(self, record: CallBehavior) -> None:
        """A start-up record put back before its sandbox's calls (the records are in sandbox, then call order)."""
        key = (record.sandbox, record.call >= 0, record.call)
        at = next((index for index, kept in enumerate(self.behavior)
                   if (kept.sandbox, kept.call >= 0, kept.call) > key), len(self.behavior))
        self.behavior.insert(at, record)


def _destination(event: dict[str, Any]) -> tuple[str, Any]:
    """What makes an attempt a repeat of one a record holds: its host and the address it went to (a connection to
    another address claiming the same name in its SNI or Host is not a repeat)."""
    return host_of(event), event.get("original_dst")


def _searched(event: dict[str, Any]) -> str:
    """What of an attempt is searched for canaries: its first bytes (or datagram), and the name it looked up, also
    with the labels joined (a token hex-encoded across DNS labels)."""
    query = str(event.get("query") or "")
    return "\n".join((str(event.get("first_bytes") or event.get("data") or ""), query, query.replace(".", "")))


def canaries_in_response(record: CallBehavior, texts: list[str], canaries: dict[str, str]) -> None:
    """The planted tokens in what the call answered (ProbeResult.answer_texts), each place and encoding once."""
    seen = {(event.where, event.encoding) for event in record.canaries if event.how == "response"}
    planted = tuple(canaries.items())
    for text in texts:
        for hit in _hits_in_answer(text, planted):
            if (hit.where, hit.encoding) not in seen:
                seen.add((hit.where, hit.encoding))
                record.canaries.append(CanaryEvent(where=hit.where, how="response", encoding=hit.encoding))


@lru_cache(maxsize=8)  # the same answer comes again (one file read by three tools: 1.2 MB each, ~25 ms a search)
def _hits_in_answer(text: str, planted: tuple[tuple[str, str], ...]) -> tuple[CanaryHit, ...]:
    return tuple(find_canaries(text, dict(planted)))


def late_canary_findings(events: list[dict[str, Any]], canaries: dict[str, str]) -> list[Finding]:
    """B3 for the planted tokens in the attempts no probe record took (the scan's late drain: after the last call's
    look, while the server ended); B2 reports the attempts themselves."""
    found = {(hit.where, hit.encoding): None for event in events for hit in find_canaries(_searched(event), canaries)}
    return check_canaries(CallBehavior(call=-1, tool=None, label=AFTER_LAST_CALL, canaries=[
        CanaryEvent(where=where, how="egress", encoding=encoding) for where, encoding in found]))
