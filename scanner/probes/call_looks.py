"""The looks into the sandbox after one probe call: its exit state (`inspect`), the snapshot (files and cgroup
counters) then the process list, and the egress sink's new attempts (its log), the three at once.

Engine round trips with little order between them: taken one after another they were most of what a call cost the
scanner beyond the server's own answer (docs/probes.md, "What a probe call costs"); taken in threads at once, a call
waits for the slowest. The process list waits for the snapshot: on the exec path, listed during the snapshot exec it
would show the exec's shell; on the observer's, the observer's answer says whether the processes changed at all
(observer_watch.Watch.processes: `top` only if they may have). The drain waits for nothing: each attempt goes to the
record of the call the sink accepted it during, however late it is logged (scanner.probes.egress_windows). Each
look's failure is kept as its value, for the runner to handle as it did: a snapshot or process list the engine
refused (ObserveError) is an unobserved call, a sink that failed is a recorded error; an exit state that could not
be read raises, as before.

The exit state is not asked of the engine when the observer answered the look: the observer runs in the sandbox's
pid namespace, which the kernel empties when its init ends, so an answer to a request sent after the call's answer
shows the sandbox running after the call's answer, as much as an `inspect` beside it would (and an ended sandbox is
still seen: the observer's stream ends, the look falls back to an exec, and the engine is asked). With no observer,
or one lost during this look, the engine is asked, as before. The re-list (scanner.probes.relist_tools) can run
beside the looks as well: it asks the server, not the sandbox, and nothing of the looks waits for it.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import Any, TypeVar

import anyio
import docker

from sandbox.run import observe
from sandbox.run.observe import ExitState, ObserveError, Process, Snapshot
from sandbox.run.observer_watch import Watch
from scanner.probes.egress_drain import Drain
from scanner.probes.model import ProbeCall

T = TypeVar("T")
Fetch = Callable[[], Awaitable[list[dict[str, Any]] | None]]
# What the observer's answer shows of the exit state: running (the exit code and the OOM kill are read only of a
# sandbox that stopped, from the engine)
RUNNING = ExitState(running=True, exit_code=None, oom_killed=False)


@dataclass(frozen=True)
class Looks:
    state: ExitState
    snapshot: Snapshot | ObserveError
    processes: list[Process] | ObserveError
    egress: list[dict[str, Any]] | Exception | None  # None: the network is not observed
    tools: list[dict[str, Any]] | None = None  # what a re-list fetched beside the looks (None: none, or it failed)


async def look_after_call(client: docker.DockerClient, container_id: str, drain: Drain | None,
                          watch: Watch | None = None, relist: Fetch | None = None) -> Looks:
    """Every look after a call, in threads at once; raises only what reading the exit state raised. `watch` takes
    the snapshot and the process list (its observer, else one exec and `top`); default one exec and `top`.
    `relist`: a re-list fetch to run beside them (its tools in `Looks.tools`)."""
    found: dict[str, Any] = {}
    observed = watch is not None and watch.observer is not None  # its answer will show the sandbox running

    def state() -> ExitState:
        return observe.exit_state(client, container_id)

    async def fetch(fetch_tools: Fetch) -> None:
        found["tools"] = await fetch_tools()

    async def take(name: str, look: Callable[[], Any], kept: type[BaseException]) -> None:
        try:
            found[name] = await anyio.to_thread.run_sync(look)
        except kept as exc:
            found[name] = exc

    async def in_order() -> None:
        # In this order, never at once: `top` during the snapshot exec would list its shell and `find` as the
        # server's processes; the observer's answer says whether `top` is needed at all.
        await take("snapshot", watch.snapshot if watch else (lambda: observe.snapshot(client, container_id)),
                   ObserveError)
        await take("processes", watch.processes if watch else (lambda: observe.processes(client, container_id)),
                   ObserveError)

    async with anyio.create_task_group() as group:
        if not observed:
            group.start_soon(take, "state", state, Exception)
        group.start_soon(in_order)
        if drain is not None:  # the sink failing loses evidence; it must not stop probing (the runner records it)
            group.start_soon(take, "egress", lambda: drain(container_id), Exception)
        if relist is not None:
            group.start_soon(fetch, relist)
    if "state" not in found and watch is not None and watch.last_by_observer:
        found["state"] = RUNNING  # the observer answered: the sandbox ran after the call's answer
    elif "state" not in found:  # the observer was lost during this look: the engine says
        found["state"] = await anyio.to_thread.run_sync(state)
    if isinstance(found["state"], BaseException):
        raise found["state"]
    return Looks(state=found["state"], snapshot=found["snapshot"], processes=found["processes"],
                 egress=found.get("egress"), tools=found.get("tools"))


def note_observer_gaps(watch: Watch, call: ProbeCall, errors: list[str]) -> None:
    """Once each: the canaries' opens the observer could not watch, and the observer lost during this call's looks
    (`_note_lost_observer`)."""
    unwatched = watch.opens_unwatched()
    if unwatched is not None and not watch.opens_noted:
        watch.opens_noted = True
        errors.append(f"the sandbox's observer could not watch the canaries' opens ({unwatched}); a canary read that "
                      "keeps the file's access time still (O_NOATIME) is not seen"[:600])
    _note_lost_observer(watch, call, errors)


def _note_lost_observer(watch: Watch, call: ProbeCall, errors: list[str]) -> None:
    """Once, when the sandbox's observer was lost during this call's looks: a scan note naming the call. The server
    runs as the observer's uid and is the only thing in the sandbox that can signal it, so this is the server
    stopping or killing the scanner's observer, a hostile act; the looks go on, one exec each."""
    if watch.lost is None or watch.lost_noted:
        return
    watch.lost_noted = True
    errors.append(f"the sandbox's observer was lost at or before probe '{call.label}' of '{call.tool}' ({watch.lost}); "
                  f"the server may have stopped or killed it (hostile); the remaining looks took one exec each"[:600])


def taken(look: T | ObserveError) -> T:
    """A look's value, or the ObserveError it ended in raised."""
    if isinstance(look, ObserveError):
        raise look
    return look
