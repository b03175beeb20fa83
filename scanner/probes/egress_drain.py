"""Hand the egress sink's events to the probe runner call by call: each call gets the events not handed out yet, all
of them (what a record keeps is bounded where it is kept: scanner.probes.egress_windows; the sink logs at most its
event cap in all). `gaps` says what the log may be missing, for the scan's errors."""

from __future__ import annotations

import dataclasses
from typing import Any, Protocol

from sandbox.core.errors import SandboxError
from sandbox.run.sink import EgressEvent, Sink
from sandbox.run.sink_other import other_attempts


class Drain(Protocol):
    """What the runner drains with: the attempts not handed out yet (`settled`: asked of the engine too)."""

    def __call__(self, container_id: str, /, *, settled: bool = False) -> list[dict[str, Any]]: ...


class EgressDrain:
    """Callable `drain(container_id) -> list[dict]` for the runner. Events are keyed, not cut by time: the sink logs a
    TCP connection only after reading its first bytes, with the time it was accepted, so a late line may carry an
    earlier timestamp than one already handed out."""

    def __init__(self, sink: Sink) -> None:
        self.sink = sink
        self._seen: set[tuple[Any, ...]] = set()
        self._other_gaps: list[str] = []

    def __call__(self, _container_id: str, *, settled: bool = False) -> list[dict[str, Any]]:
        """The events not handed out yet; `settled`: with what the engine logged by now (the scan's last drains)."""
        fresh = []
        for event in self.sink.events(settled=settled):
            key = (event.ts, event.kind, event.host, event.port, event.original_dst, event.query, event.qtype)
            if key in self._seen:
                continue
            self._seen.add(key)
            fresh.append(as_record(event))
        return fresh

    def gaps(self) -> list[str]:
        """What the sink's log may be missing, one line each (from what was read of it: after the scan's last, settled
        drain, all of it), and why the attempts by other protocols could not all be read (`others`)."""
        return [*self.sink.gaps(), *self._other_gaps]

    def others(self) -> list[dict[str, Any]]:
        """The attempts by protocols the sink only counts (ICMP echo, UDP-Lite: sandbox.run.sink_other), each with
        the name the sink's DNS answered with its address, when it did; what could not be read goes to `gaps`."""
        try:
            events, full = other_attempts(self.sink.session.client, self.sink.container_id)
        except SandboxError as exc:
            self._other_gaps.append(f"{exc}: network attempts by ICMP or UDP-Lite are not seen")
            return []
        if full:
            self._other_gaps.append("the egress sink counted as many destinations of other protocols (ICMP, "
                                    "UDP-Lite) as it keeps: later ones are not seen")
        names = {event.answer: event.query for event in self.sink.events() if event.kind == "dns" and event.answer}
        return [event | ({"resolved_name": names[event["original_dst"]]} if event["original_dst"] in names else {})
                for event in events]


def as_record(event: EgressEvent) -> dict[str, Any]:
    """A JSON-ready record: the captured bytes as text (canary tokens are ASCII), without the raw log line."""
    record = {k: v for k, v in dataclasses.asdict(event).items() if k not in ("raw", "first_bytes") and v not in
              (None, (), b"", False)}
    if event.first_bytes:
        record["first_bytes"] = event.first_bytes.decode("utf-8", errors="replace")
    return record
