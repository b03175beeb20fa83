"""How one sandbox's snapshots are taken: by its observer while it answers (sandbox.run.observer), else by one
exec per look (sandbox.run.observe.snapshot, the path the observer replaces and falls back to). A Watch that lost
its observer keeps why (`lost`) and never uses it again; `path` says which way the looks went, for the report.

The process list (host pids, the engine's `top`) is asked of the engine only when the sandbox's processes may have
changed: each observer answer carries the pid namespace's process table (pid, ppid, start time, args), and a `top`
taken after a look whose table had as many processes as `top` listed is the list for every later look whose table
is the same (docs/observer.md, "Processes"). On the exec path every list is a `top`."""

from __future__ import annotations

import threading
from dataclasses import dataclass, field

import docker

from sandbox.run import observe
from sandbox.run.observer import Observer, ObserverLost, Signature, start_observer


@dataclass(frozen=True)
class _Listed:
    """A `top`, and the observer's table of the look before it (the same processes: as many, none ended since)."""

    signature: Signature
    look: int  # the number of the look that table came from
    processes: list[observe.Process]


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
    opens_noted: bool = False  # the scan has said the canaries' opens are not watched (once)
    last_by_observer: bool = False  # the latest snapshot was the observer's answer (the sandbox ran when it came)
    tops: int = 0  # process lists asked of the engine
    tops_saved: int = 0  # process lists the observer's table showed unchanged since the last `top`
    _signature: Signature | None = field(default=None, repr=False)  # the last look's process table (None: none)
    _look: int = field(default=0, repr=False)
    _listed: _Listed | None = field(default=None, repr=False)
    _lock: threading.Lock = field(default_factory=threading.Lock, repr=False)

    def snapshot(self) -> observe.Snapshot:
        """One look: the observer's answer, or one exec when there is no observer (any more)."""
        with self._lock:
            self._look += 1
            self._signature = None
            self.last_by_observer = False
            if self.observer is not None:
                try:
                    taken, self._signature = self.observer.look()
                except ObserverLost as exc:
                    self.lost = f"{exc}; {self.observer.exit_reason()}"
                    self.observer.close()
                    self.observer = None
                else:
                    self.by_observer += 1
                    self.last_by_observer = True
                    return taken
            self.by_exec += 1
        return observe.snapshot(self.client, self.container_id)

    def processes(self) -> list[observe.Process]:
        """The sandbox's processes, host pids, as `top` lists them (raises ObserveError as it does): the last `top`
        again when the observer's table at the latest look is the one that `top` was taken after, and as long."""
        with self._lock:
            signature, look, listed = self._signature, self._look, self._listed
            if listed is not None and signature == listed.signature and look > listed.look:
                self.tops_saved += 1
                return list(listed.processes)
            self.tops += 1
        taken = observe.processes(self.client, self.container_id)
        with self._lock:  # a process born and one ended between the look and `top` keep the counts equal, but the
            # next table then lacks the ended one, so it differs from this one and `top` is asked again
            whole = signature is not None and len(taken) == len(signature) and look == self._look
            self._listed = _Listed(signature, look, list(taken)) if whole and signature is not None else None
        return taken

    def opens_unwatched(self) -> str | None:
        """Why the observer could not watch the canaries' opens (its answers said so), None while it does or has
        none to watch (the exec path watches none: the observer's absence or loss is said on its own)."""
        return self.observer.opens_unwatched if self.observer is not None else None

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


def watch(client: docker.DockerClient, container_id: str, *, use_observer: bool = True,
          opens: tuple[str, ...] = ()) -> Watch:
    """A Watch on a running sandbox, with its observer started (or why not) when `use_observer`, watching the opens
    of the files `opens` names (the planted canaries: a read that keeps their access time still is seen)."""
    if not use_observer:
        return Watch(client, container_id, unavailable="the observer is turned off")
    started = start_observer(client, container_id, opens=opens)
    if isinstance(started, str):
        return Watch(client, container_id, unavailable=f"the observer could not start: {started}")
    return Watch(client, container_id, observer=started)
