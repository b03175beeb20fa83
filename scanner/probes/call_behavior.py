"""What one call did in the sandbox, read from the snapshots before and after it: files created, changed, deleted
and read (a planted canary file read is a canary event), processes left running, and the cgroup's counters."""

from __future__ import annotations

from sandbox.run import observe
from sandbox.run.observe import Process, Snapshot
from scanner.report.model import CallBehavior, CanaryEvent, FileChanges, ProcessSeen, ResourceUse

MAX_LISTED_PATHS = 200


def fill_record(record: CallBehavior, before: Snapshot, after: Snapshot, canaries: dict[str, str]) -> None:
    """The file changes, canary files read and resource use between two snapshots, into the call's record."""
    changes = observe.diff(before, after)
    truncated = any(len(items) > MAX_LISTED_PATHS for items in (changes.created, changes.modified, changes.deleted))
    modified = changes.modified[:MAX_LISTED_PATHS]
    resized = [path for path in modified if path in before.files and path in after.files
               and before.files[path].size != after.files[path].size]
    record.files = FileChanges(created=changes.created[:MAX_LISTED_PATHS], modified=modified,
                               deleted=changes.deleted[:MAX_LISTED_PATHS], resized=resized,
                               truncated=truncated or after.truncated)
    planted_files = {where.split(" (")[0] for where in canaries.values() if not where.startswith("env ")}
    for path in changes.read:
        if path in planted_files:
            record.canaries.append(CanaryEvent(where=path, how="read"))
    old, new = before.counters, after.counters
    record.resources = ResourceUse(
        memory_peak_bytes=new.memory_peak_bytes,
        memory_peak_raised=bool(new.memory_peak_bytes and old.memory_peak_bytes
                                and new.memory_peak_bytes > old.memory_peak_bytes),
        memory_limit_hit=_rose(old.memory_limit_hits, new.memory_limit_hits),
        oom_killed=_rose(old.oom_kills, new.oom_kills),
        pids_peak=new.pids_peak,
        pids_limit_hit=_rose(old.pids_limit_hits, new.pids_limit_hits),
        cpu_seconds=None if new.cpu_seconds is None or old.cpu_seconds is None
        else round(new.cpu_seconds - old.cpu_seconds, 3),
    )


def new_processes(now: list[Process], known: set[int]) -> list[ProcessSeen]:
    """The processes running now that were not before the call (the snapshot's own left out)."""
    return [ProcessSeen(pid=p.pid, args=p.args) for p in now if p.pid not in known and not _is_ours(p)]


def _rose(old: int | None, new: int | None) -> bool:
    return old is not None and new is not None and new > old


def _is_ours(process: Process) -> bool:
    """The snapshot exec's own processes, should one still be winding down."""
    return "@@MCP-SANDBOX-CGROUP@@" in process.args or process.args.startswith("tar -x -f -")
