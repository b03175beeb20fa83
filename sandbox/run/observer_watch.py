"""How one sandbox's snapshots are taken: by its observer while it answers (sandbox.run.observer), else by one
exec per look (sandbox.run.observe.snapshot, the path the observer replaces and falls back to). A Watch that lost
its observer keeps why (`lost`) and never uses it again; `path` says which way the looks went, for the report."""

from __future__ import annotations

import threading
from dataclasses import dataclass, field

import docker

from sandbox.run import observe
from sandbox.run.observer import Observer, ObserverLost, start_observer


@dataclass
class Watch:
    client: docker.DockerClient
    container_id: str
    observer: Observer | None = None
    unavailable: str | None = None  # why no observer was started (the exec path from the first look)
    lost: str | None = None  # why the observer was given up on mid-scan
    by_observer: int = 0
    by_exec: int = 0
    finished: bool = False
    lost_noted: bool = False  # the scan has said the observer was lost (once)
    _lock: threading.Lock = field(default_factory=threading.Lock, repr=False)

    def snapshot(self) -> observe.Snapshot:
        """One look: the observer's answer, or one exec when there is no observer (any more)."""
        with self._lock:
            if self.observer is not None:
                try:
                    taken = self.observer.snapshot()
                except ObserverLost as exc:
                    self.lost = f"{exc}; {self.observer.exit_reason()}"
                    self.observer.close()
                    self.observer = None
                else:
                    self.by_observer += 1
                    return taken
            self.by_exec += 1
        return observe.snapshot(self.client, self.container_id)

    def own_pids(self) -> set[int]:
        """The observer's host pid (a process of the sandbox, but the scanner's), when it is known."""
        return set() if self.observer is None or self.observer.host_pid is None else {self.observer.host_pid}

    def path(self) -> str:
        """`observer`, `exec (why)` or `observer, then exec (why)`: how this sandbox's looks were taken."""
        if self.unavailable is not None:
            return f"exec ({self.unavailable})"
        if self.lost is not None:
            return f"observer, then exec ({self.lost})"
        return "observer" if self.by_observer or self.observer is not None else "exec"

    def close(self) -> None:
        with self._lock:
            if self.observer is not None:
                self.observer.close()
                self.observer = None

    def finish(self) -> list[str]:
        """End the looks (the observer ends with its stdin): how they were taken, once; [] when already finished."""
        if self.finished:
            return []
        self.close()
        self.finished = True
        return [self.path()]


def watch(client: docker.DockerClient, container_id: str, *, use_observer: bool = True) -> Watch:
    """A Watch on a running sandbox, with its observer started (or why not) when `use_observer`."""
    if not use_observer:
        return Watch(client, container_id, unavailable="the observer is turned off")
    started = start_observer(client, container_id)
    if isinstance(started, str):
        return Watch(client, container_id, unavailable=f"the observer could not start: {started}")
    return Watch(client, container_id, observer=started)
