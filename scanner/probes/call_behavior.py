"""What one call did in the sandbox, read from the snapshots before and after it: files created, changed, deleted
and read (a planted canary file read is a canary event), processes left running, and the cgroup's counters."""

from __future__ import annotations

import time
from collections.abc import Awaitable, Callable, Sequence
from typing import Literal

import anyio

from sandbox.run import observe
from sandbox.run.observe import Process, Snapshot, read_since_changed
from scanner.report.model import CallBehavior, CanaryEvent, FileChanges, ProcessSeen, ResourceUse
from scanner.rules.behavior import BUSY_MIN_SECONDS, busy

LAST_WINDOW = BUSY_MIN_SECONDS + 0.05  # the least time between the last call's look and the look after it

MAX_LISTED_PATHS = 200


def fill_record(record: CallBehavior, before: Snapshot, after: Snapshot, canaries: dict[str, str],
                pids_now: tuple[int, int] | None = None) -> None:
    """The file changes, canary files read and resource use between two snapshots, into the call's record. A failed
    snapshot on either side gives no diff (its missing files are not "deleted"): the record says `failed (reason)`,
    and only the canaries the observer saw opened (which needs no listing) are read. `pids_now` is (in use, limit)
    from the engine's stats, read when a snapshot failed."""
    record.resources = _resources(before, after, pids_now)
    failure = after.failure or before.failure
    if failure is not None:
        record.snapshot = f"failed ({failure})"
        add_reads(record, after.opened, canaries)
        return
    changes = observe.diff(before, after)
    truncated = any(len(items) > MAX_LISTED_PATHS for items in (changes.created, changes.modified, changes.deleted))
    modified = changes.modified[:MAX_LISTED_PATHS]
    resized = [path for path in modified if path in before.files and path in after.files
               and before.files[path].size != after.files[path].size]
    record.files = FileChanges(created=_shown(changes.created[:MAX_LISTED_PATHS]), modified=_shown(modified),
                               deleted=_shown(changes.deleted[:MAX_LISTED_PATHS]), resized=_shown(resized),
                               truncated=truncated or after.truncated)
    add_reads(record, changes.read, canaries)


def add_reads(record: CallBehavior, paths: Sequence[str], canaries: dict[str, str]) -> None:
    """The planted canary files among `paths` (read, or opened as the observer's watches saw), as read events of
    the record, each once."""
    planted_files = {where.split(" (")[0] for where in canaries.values() if not where.startswith("env ")}
    known = {event.where for event in record.canaries if event.how == "read"}
    for path in dict.fromkeys(paths):
        if path in planted_files and path not in known:
            record.canaries.append(CanaryEvent(where=path, how="read"))


def reads_at_baseline(record: CallBehavior, baseline: Snapshot, canaries: dict[str, str]) -> None:
    """The planted canaries a sandbox's baseline shows read already (between their planting and that first look,
    before the observer's watches were set): read events of its start-up record."""
    add_reads(record, read_since_changed(baseline), canaries)


def reads_after(records: list[CallBehavior], sandbox: int, fresh: Snapshot, canaries: dict[str, str]) -> None:
    """The canaries the observer saw opened between a look that failed (no diff is taken against it) and `fresh`,
    the look after it, into the record of that failed look (this sandbox's last): no open it saw goes unsaid."""
    if records and records[-1].sandbox == sandbox:
        add_reads(records[-1], fresh.opened, canaries)


def _shown(paths: list[str]) -> list[str]:
    """Paths as the report can carry them: a name's bytes that are not UTF-8 (kept as surrogates, so that two names
    never collide in the diff) as `\\xNN` text. A surrogate cannot be written as JSON, so one file a server names
    so would make the report unwritable."""
    return [path.encode("utf-8", "surrogateescape").decode("utf-8", "backslashreplace") for path in paths]


def noteworthy(record: CallBehavior, cpus: float = 1.0) -> bool:
    """Whether a record that is no call's (start-up, after the last call) saw anything worth keeping."""
    use = record.resources
    return bool(record.files.created or record.files.modified or record.files.deleted or record.canaries
                or record.egress or record.processes or record.snapshot != "ok" or use.oom_killed
                or use.memory_limit_hit or use.pids_limit_hit or busy(use, cpus))


def unseen_files(records: list[CallBehavior]) -> str | None:
    """One scan error for the records whose look could not list every file (a directory the server made unreadable,
    the size cap, a refused fork): what those calls wrote, deleted or read is not seen, so the scan is incomplete,
    never a pass that only a "failed snapshots" row contradicts. None when every look was whole."""
    failed = [record for record in records if record.snapshot != "ok"]
    if not failed:
        return None
    first = failed[0]
    where = f"probe '{first.label}' of '{first.tool}'" if first.call >= 0 else first.label
    return (f"the look into the sandbox could not list every file for {len(failed)} call record(s) (first: {where}, "
            f"{first.snapshot}); what they wrote, deleted or read is not seen")[:600]


def _resources(before: Snapshot, after: Snapshot, pids_now: tuple[int, int] | None) -> ResourceUse:
    old, new = before.counters, after.counters
    evidence = pids_limit_evidence(before, after, pids_now)
    return ResourceUse(
        memory_peak_bytes=new.memory_peak_bytes,
        memory_peak_raised=bool(new.memory_peak_bytes and old.memory_peak_bytes
                                and new.memory_peak_bytes > old.memory_peak_bytes),
        memory_limit_hit=_rose(old.memory_limit_hits, new.memory_limit_hits),
        oom_killed=_rose(old.oom_kills, new.oom_kills),
        pids_peak=new.pids_peak,
        pids_limit_hit=evidence is not None, pids_limit_evidence=evidence,
        cpu_seconds=None if new.cpu_seconds is None or old.cpu_seconds is None
        else round(new.cpu_seconds - old.cpu_seconds, 3),
        cpu_wait_seconds=None if new.wait_seconds is None or old.wait_seconds is None
        else round(max(new.wait_seconds - old.wait_seconds, 0.0), 3),
        seconds=round(after.taken_at - before.taken_at, 3) if after.taken_at > before.taken_at > 0 else None,
    )


def pids_limit_evidence(before: Snapshot, after: Snapshot, pids_now: tuple[int, int] | None) -> str | None:
    """Why the call counts as having hit the pids limit, or None. The counters are read with shell builtins before
    the look forks, so a rise is the call's unless the look before it failed (its own refused forks count then);
    the engine's stats, read from outside, at the limit are evidence even when the look itself could not fork."""
    old, new = before.counters.pids_limit_hits, after.counters.pids_limit_hits
    if not before.failed and _rose(old, new):
        return f"pids.events max rose from {old} to {new}: forks refused at the limit"
    return pids_at_limit(pids_now, after.failure)


def pids_at_limit(pids_now: tuple[int, int] | None, failure: str | None) -> str | None:
    """The engine's stats at the limit as evidence, naming what could not be done inside the sandbox."""
    if pids_now is None or pids_now[0] < pids_now[1]:
        return None
    said = f"; the scanner's own look could not run ({failure})" if failure else ""
    return f"{pids_now[0]} of {pids_now[1]} pids in use (the engine's stats){said}"


def new_processes(now: list[Process], known: set[int], server_pid: int | None = None) -> list[ProcessSeen]:
    """The processes running now that were not before the call (the snapshot's own left out), each with its role
    when the server's pid is known: a "server child" (the server is among its ancestors) or a "daemon" (it is not:
    it outlived the parent that started it)."""
    parents = {p.pid: p.ppid for p in now}
    return [ProcessSeen(pid=p.pid, args=p.args, role=_role(p.pid, parents, server_pid)) for p in now
            if p.pid not in known and not _is_ours(p, parents)]


def _role(pid: int, parents: dict[int, int], server_pid: int | None) -> Literal["server child", "daemon"] | None:
    if server_pid is None:
        return None
    seen: set[int] = set()
    while pid in parents and pid not in seen:
        seen.add(pid)
        pid = parents[pid]
        if pid == server_pid:
            return "server child"
    return "daemon"


def drop_exited(record: CallBehavior, alive: set[int]) -> None:
    """A process a record lists as left running that had exited by the next look was transient (a self-check such
    as `sh -c python3 --version` caught at the snapshot): it is no longer listed."""
    record.processes = [process for process in record.processes if process.pid in alive]


def _rose(old: int | None, new: int | None) -> bool:
    return old is not None and new is not None and new > old


def _is_ours(process: Process, parents: dict[int, int]) -> bool:
    """The snapshot exec's own processes, should one still be winding down. Its command line alone proves nothing
    (a server may name a child `sh -c '… @@MCP-SANDBOX-CGROUP@@'`); an exec's process is started by the engine, so
    its parent is outside the container, where no process the server starts can have its parent (an orphan is
    reparented to the container's init)."""
    marked = "@@MCP-SANDBOX-CGROUP@@" in process.args or process.args.startswith("tar -x -f -")
    return marked and process.ppid not in parents


async def look_last(observe_after: Callable[[CallBehavior, Snapshot], Awaitable[None]], record: CallBehavior,
                    before: Snapshot) -> None:
    """The look after the last call's, taken no sooner than LAST_WINDOW after it: `busy` judges no shorter window,
    and the last re-list (beside this look) sometimes took less, so a thread left spinning after the last call went
    unjudged on the runs where it did."""
    await anyio.sleep(max(0.0, before.taken_at + LAST_WINDOW - time.time()))
    await observe_after(record, before)
