"""Where one scan's time goes: wall seconds per phase (the report's `timings`), measured where each phase runs.

Phases that have no order between them run in threads at once, so a phase's seconds are its own wall time, not its
share of the total. A phase entered twice (a restart, a second server) adds up. Thread-safe: the threads of one scan
share the clock.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Literal, ParamSpec, TypeVar

Phase = Literal["resolve", "engine_connect", "gc_sweep", "image_check", "install_lookup", "install_proxy",
                "install_container", "install_steps", "install_finish", "install_commit", "provenance", "sink_start",
                "probe_plan", "container_create", "container_start", "namespace_read", "seed", "first_answer",
                "listing", "probes", "relisting", "late_egress", "server_end", "teardown", "assemble"]

P = ParamSpec("P")
R = TypeVar("R")


class PhaseClock:
    def __init__(self) -> None:
        self._seconds: dict[str, float] = {}
        self._lock = threading.Lock()

    @contextmanager
    def phase(self, name: Phase) -> Iterator[None]:
        began = time.monotonic()
        try:
            yield
        finally:
            self.add(name, time.monotonic() - began)

    def timed(self, name: Phase, function: Callable[P, R], *args: P.args, **kwargs: P.kwargs) -> R:
        """`function(*args, **kwargs)`, timed as `name` (for work handed to a thread)."""
        with self.phase(name):
            return function(*args, **kwargs)

    def add(self, name: Phase, seconds: float) -> None:
        with self._lock:
            self._seconds[name] = round(self._seconds.get(name, 0.0) + seconds, 3)

    def seconds(self) -> dict[str, float]:
        """Every phase measured so far, by name (the report's Timings fields)."""
        with self._lock:
            return dict(self._seconds)
