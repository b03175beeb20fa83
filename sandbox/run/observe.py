"""Watching a running sandbox from outside: seed its scratch areas, snapshot them, list its processes, read its
cgroup counters and its exit state. Every look goes through the engine (Docker exec, `top`, `inspect`); nothing of
the host is shared with the container.

A snapshot is one Docker exec, as the run uid, of `find -printf` over the writable areas (the workspace, HOME and
/tmp: path, type, size, mtime, atime, ctime, mode) followed by the container's cgroup counters (memory, pids, CPU; cgroup v2
or v1). HOME is a `strictatime` tmpfs (see sandbox.policy), so every read of a planted canary moves its atime.

Seeding (a tar streamed into `tar -x` through an exec with stdin) is sandbox.run.exec_stream; the long-lived
observer that answers snapshots without an exec per look is sandbox.run.observer (docs/observer.md).
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field
from typing import Any

import docker
from docker.errors import APIError, NotFound

from sandbox.run.exec_stream import (EXEC_ENVIRONMENT, EXEC_USER, ObserveError, api_message, exec_exit_code,
                                     extract_tar)
from sandbox.run.netns import NETNS_SCRIPT, NamespaceUnread, NetworkNamespace, parse_namespace
from sandbox.run.policy import HOME, WORKSPACE

# The scratch areas, and the two tmpfs the engine mounts writable (mode 1777) in every container with a private IPC
# namespace: a file dropped in /dev/shm or /dev/mqueue was seen by no look.
WATCHED = (WORKSPACE, HOME, "/tmp", "/dev/shm", "/dev/mqueue")

MAX_SNAPSHOT_BYTES = 8 * 1024 * 1024  # bounds what a server that makes millions of files can make us read
CGROUP_MARK = "@@MCP-SANDBOX-CGROUP@@"

# One shell script per look: the file list (NUL-separated records, capped), then the cgroup counters (v2, else v1).
CGROUP_FILES = (
    "/sys/fs/cgroup/memory.current", "/sys/fs/cgroup/memory.peak", "/sys/fs/cgroup/memory.events",
    "/sys/fs/cgroup/pids.current", "/sys/fs/cgroup/pids.peak", "/sys/fs/cgroup/pids.events",
    "/sys/fs/cgroup/cpu.stat",
    "/sys/fs/cgroup/memory/memory.usage_in_bytes", "/sys/fs/cgroup/memory/memory.max_usage_in_bytes",
    "/sys/fs/cgroup/memory/memory.failcnt", "/sys/fs/cgroup/memory/memory.oom_control",
    "/sys/fs/cgroup/pids/pids.current", "/sys/fs/cgroup/pids/pids.peak", "/sys/fs/cgroup/pids/pids.events",
    "/sys/fs/cgroup/cpuacct/cpuacct.usage", "/sys/fs/cgroup/cpu/cpu.stat",
)
# Counters first, with shell builtins only (no fork): a server that exhausted the pids limit leaves the exec's shell
# unable to start `find`, and the counters must still be read. The listing then ends with find's exit status; a
# listing without that end mark was cut short (the size cap, or a fork that failed).
LISTING_MARK = "@@MCP-SANDBOX-LISTING@@"
END_MARK = "@@MCP-SANDBOX-END@@"
# type, size, mtime, atime, ctime, mode, path. The ctime is what the server cannot set back: a same-size rewrite or a
# read whose mtime and atime it restored with utime (it owns every file there) still moves it.
LISTING_FORMAT = "%y\\t%s\\t%T@\\t%A@\\t%C@\\t%m\\t%p\\0"
_SNAPSHOT_SCRIPT = (
    "for f in " + " ".join(CGROUP_FILES) + "; do [ -r \"$f\" ] && { printf '%s ' \"$f\"; "
    "while IFS= read -r l || [ -n \"$l\" ]; do printf '%s ' \"$l\"; done < \"$f\"; printf '\\n'; }; done; "
    f"printf '{CGROUP_MARK}\\n{LISTING_MARK}\\n'; "
    "{ find " + " ".join(WATCHED) + f" -xdev -printf '{LISTING_FORMAT}' 2>/dev/null; "
    f"printf '\\0{END_MARK} %s\\n' \"$?\"; }} | head -c {MAX_SNAPSHOT_BYTES}; true"
)


@dataclass(frozen=True)
class FileEntry:
    path: str
    kind: str  # find's %y: f file, d directory, l symlink, ...
    size: int
    mtime: float
    atime: float
    mode: str
    ctime: float = 0.0  # the inode's change time: moves with any write, chmod, link or utime, and cannot be set


@dataclass(frozen=True)
class Counters:
    """The container's cgroup counters at one moment (None: not available on this engine/kernel)."""

    memory_bytes: int | None = None
    memory_peak_bytes: int | None = None
    memory_limit_hits: int | None = None  # v1 failcnt / v2 memory.events max
    oom_kills: int | None = None
    pids: int | None = None
    pids_peak: int | None = None
    pids_limit_hits: int | None = None  # pids.events max: forks refused at the limit
    cpu_seconds: float | None = None
    # The sandbox's threads' time ready to run but waiting for a CPU (observer_agent.RunQueue); None on the exec path.
    wait_seconds: float | None = None


@dataclass(frozen=True)
class Snapshot:
    taken_at: float
    files: dict[str, FileEntry]
    counters: Counters
    truncated: bool = False
    failure: str | None = None  # why the listing is not whole (no diff may be taken against it); None: it is
    # The watched files (the canaries) opened or read since the look before, as the observer's inotify watches saw
    # them: a read with O_NOATIME, which leaves the access time still, is among them (none on the exec path).
    opened: tuple[str, ...] = ()

    @property
    def failed(self) -> bool:
        return self.failure is not None


@dataclass
class FileDiff:
    created: list[str] = field(default_factory=list)
    modified: list[str] = field(default_factory=list)
    deleted: list[str] = field(default_factory=list)
    read: list[str] = field(default_factory=list)  # atime moved (only meaningful on the strictatime HOME)

    def changed(self) -> bool:
        return bool(self.created or self.modified or self.deleted)


@dataclass(frozen=True)
class Process:
    pid: int
    ppid: int
    args: str


@dataclass(frozen=True)
class ExitState:
    running: bool
    exit_code: int | None
    oom_killed: bool
    error: str = ""


# ---- snapshots --------------------------------------------------------------------------------------------------------

def snapshot(client: docker.DockerClient, container_id: str) -> Snapshot:
    """The writable areas (path, type, size, mtime, atime, ctime, mode) and the cgroup counters, in one exec. A look that
    ran but could not list everything (a fork refused, the size cap, find failing) is a Snapshot with `failure` set;
    an exec the engine refused or did not answer raises ObserveError."""
    api = client.api
    try:
        exec_id = api.exec_create(container_id, ["sh", "-c", _SNAPSHOT_SCRIPT], stdout=True, stderr=True,
                                  user=EXEC_USER, environment=EXEC_ENVIRONMENT)["Id"]
        stdout, stderr = api.exec_start(exec_id, demux=True)
    except (APIError, NotFound) as exc:
        raise ObserveError(f"could not look into the sandbox: {api_message(exc)}") from exc
    return parse_snapshot(bytes(stdout or b""), taken_at=time.time(), stderr=bytes(stderr or b""))


def parse_snapshot(output: bytes, *, taken_at: float = 0.0, stderr: bytes = b"") -> Snapshot:
    """The exec's output: counters, then the listing and its end mark (`failure` says why a listing is not whole)."""
    counters_text, found, listing = output.partition(f"{CGROUP_MARK}\n{LISTING_MARK}\n".encode())
    counters = parse_counters(counters_text.decode(errors="replace"))
    complaint = stderr.decode("utf-8", errors="replace").strip().splitlines()
    said = f": {complaint[0][:200]}" if complaint else ""
    if not found:
        return Snapshot(taken_at, {}, counters, failure=f"the look into the sandbox printed no listing{said}")
    body, ended, status = listing.rpartition(f"\0{END_MARK} ".encode())
    truncated = len(listing) >= MAX_SNAPSHOT_BYTES
    if not ended:
        failure = (f"the file listing passed the {MAX_SNAPSHOT_BYTES // 2**20} MiB cap" if truncated
                   else f"the file listing did not finish{said}")
        return Snapshot(taken_at, {}, counters, truncated=truncated, failure=failure)
    if status.strip() != b"0":
        return Snapshot(taken_at, {}, counters, failure=f"find exited with status "
                        f"{status.strip().decode(errors='replace')[:20]} (some paths could not be read)")
    return Snapshot(taken_at=taken_at, files=_file_entries(body), counters=counters)


def _file_entries(listing: bytes) -> dict[str, FileEntry]:
    files: dict[str, FileEntry] = {}
    for record in listing.split(b"\0"):
        fields = record.split(b"\t", 6)
        if len(fields) != 7:
            continue
        kind, size, mtime, atime, ctime, mode, path = fields
        try:
            entry = FileEntry(path=path.decode("utf-8", errors="surrogateescape"), kind=kind.decode(),
                              size=int(size), mtime=float(mtime), atime=float(atime), mode=mode.decode(),
                              ctime=float(ctime))
        except ValueError:
            continue
        files[entry.path] = entry
    return files


def parse_counters(text: str) -> Counters:
    values: dict[str, list[str]] = {}
    for line in text.splitlines():
        name, _, rest = line.partition(" ")
        if name:
            values[name] = rest.split()

    def number(path: str) -> int | None:
        got = values.get(path)
        return int(got[0]) if got and got[0].isdigit() else None

    def keyed(path: str, key: str) -> int | None:
        got = values.get(path) or []
        for index in range(0, len(got) - 1, 2):
            if got[index] == key and got[index + 1].isdigit():
                return int(got[index + 1])
        return None

    waited = number("runqueue-wait-ns")
    wait_seconds = None if waited is None else waited / 1e9
    v2 = "/sys/fs/cgroup/memory.current" in values
    if v2:
        usage = keyed("/sys/fs/cgroup/cpu.stat", "usage_usec")
        return Counters(
            memory_bytes=number("/sys/fs/cgroup/memory.current"), memory_peak_bytes=number("/sys/fs/cgroup/memory.peak"),
            memory_limit_hits=keyed("/sys/fs/cgroup/memory.events", "max"),
            oom_kills=keyed("/sys/fs/cgroup/memory.events", "oom_kill"),
            pids=number("/sys/fs/cgroup/pids.current"), pids_peak=number("/sys/fs/cgroup/pids.peak"),
            pids_limit_hits=keyed("/sys/fs/cgroup/pids.events", "max"),
            cpu_seconds=None if usage is None else usage / 1e6, wait_seconds=wait_seconds)
    usage_ns = number("/sys/fs/cgroup/cpuacct/cpuacct.usage")
    return Counters(
        memory_bytes=number("/sys/fs/cgroup/memory/memory.usage_in_bytes"),
        memory_peak_bytes=number("/sys/fs/cgroup/memory/memory.max_usage_in_bytes"),
        memory_limit_hits=number("/sys/fs/cgroup/memory/memory.failcnt"),
        oom_kills=keyed("/sys/fs/cgroup/memory/memory.oom_control", "oom_kill"),
        pids=number("/sys/fs/cgroup/pids/pids.current"), pids_peak=number("/sys/fs/cgroup/pids/pids.peak"),
        pids_limit_hits=keyed("/sys/fs/cgroup/pids/pids.events", "max"),
        cpu_seconds=None if usage_ns is None else usage_ns / 1e9, wait_seconds=wait_seconds)


def diff(before: Snapshot, after: Snapshot) -> FileDiff:
    """Files created, modified (content size, mtime, mode or ctime) and deleted between two snapshots, and files read
    (atime moved). A directory counts only when it appears or disappears: its mtime moves with its entries. A file
    whose ctime alone moved had its times set back (utime: a same-size rewrite, or a read, hidden), was re-linked or
    replaced: it is modified, and read too, since setting the atime back is how a read is hidden."""
    result = FileDiff()
    for path, new in after.files.items():
        old = before.files.get(path)
        if old is None:
            result.created.append(path)
        elif new.kind != "d" and (new.kind != old.kind or new.size != old.size or new.mtime != old.mtime
                                  or new.mode != old.mode):
            result.modified.append(path)
        elif new.kind != "d" and new.ctime != old.ctime:
            result.modified.append(path)
            if new.kind == "f":
                result.read.append(path)
        elif new.kind == "f" and new.atime > old.atime:
            result.read.append(path)
    result.read.extend(path for path in dict.fromkeys(after.opened) if path not in result.read)
    result.deleted = [path for path in before.files if path not in after.files]
    for items in (result.created, result.modified, result.deleted, result.read):
        items.sort()
    return result


def read_since_changed(snapshot: Snapshot) -> list[str]:
    """The files whose access time is past their change time: read after they were last written or had their times
    set (a planted canary, at the sandbox's baseline: read before the first look). Planting leaves a file's atime at
    or before its ctime (tar sets it to when tar began, or to the mtime, in the same call that sets the ctime), and
    only a read moves it past; a read in the same clock tick as that call (4 ms here) is not told apart."""
    return sorted(path for path, entry in snapshot.files.items()
                  if entry.kind == "f" and entry.ctime > 0 and entry.atime > entry.ctime)


# ---- processes, stats, exit state -------------------------------------------------------------------------------------

def processes(client: docker.DockerClient, container_id: str) -> list[Process]:
    """The container's processes (host pids), from the engine's `top`."""
    try:
        top = client.api.top(container_id, ps_args="-eo pid,ppid,args")
    except (APIError, NotFound) as exc:
        raise ObserveError(f"could not list the sandbox's processes: {api_message(exc)}") from exc
    titles = [str(title).upper() for title in top.get("Titles") or []]
    found: list[Process] = []
    try:
        pid_at, ppid_at = titles.index("PID"), titles.index("PPID")
    except ValueError:
        return found
    args_at = len(titles) - 1
    for row in top.get("Processes") or []:
        try:
            found.append(Process(pid=int(row[pid_at]), ppid=int(row[ppid_at]), args=str(row[args_at])[:500]))
        except (ValueError, IndexError):
            continue
    return found


def exit_state(client: docker.DockerClient, container_id: str) -> ExitState:
    try:
        state = client.api.inspect_container(container_id).get("State") or {}
    except NotFound:
        return ExitState(running=False, exit_code=None, oom_killed=False, error="the container is gone")
    running = bool(state.get("Running"))
    return ExitState(running=running, exit_code=None if running else int(state.get("ExitCode", -1)),
                     oom_killed=bool(state.get("OOMKilled")), error=str(state.get("Error") or ""))


def stderr_tail(client: docker.DockerClient, container_id: str, lines: int = 40) -> str:
    """The last lines the server wrote to stderr (from the engine's log), for crash evidence."""
    try:
        data = client.api.logs(container_id, stdout=False, stderr=True, tail=lines)
    except (APIError, NotFound):
        return ""
    return (data if isinstance(data, bytes) else b"").decode("utf-8", errors="replace")[-4_000:]


READ_SECONDS = 5  # a FIFO in a file's place would block `head` for ever


def read_head(client: docker.DockerClient, container_id: str, path: str, limit: int) -> bytes:
    """The first `limit` bytes of a file in the sandbox (`head -c` under `timeout`, one exec as the run uid; the path
    is an argument, never shell text). A file that could not be read in READ_SECONDS, or an exec the engine refused,
    raises ObserveError."""
    api = client.api
    command = ["timeout", str(READ_SECONDS), "head", "-c", str(limit), "--", path]
    try:
        exec_id = api.exec_create(container_id, command, stdout=True, stderr=True, user=EXEC_USER,
                                  environment=EXEC_ENVIRONMENT)["Id"]
        stdout, stderr = api.exec_start(exec_id, demux=True)
        code = exec_exit_code(api, exec_id)
    except (APIError, NotFound) as exc:
        raise ObserveError(f"could not read {path!r} in the sandbox: {api_message(exc)}") from exc
    if code != 0:
        said = bytes(stderr or b"").decode("utf-8", errors="replace").strip()[:200]
        raise ObserveError(f"could not read {path!r} in the sandbox (exit {code}: {said})")
    return bytes(stdout or b"")[:limit]


def kill(client: docker.DockerClient, container_id: str) -> None:
    """Stop a stuck server now (the session's teardown removes the container later)."""
    try:
        client.api.kill(container_id)
    except (APIError, NotFound):
        pass


def network_namespace(client: docker.DockerClient, container_id: str) -> NetworkNamespace:
    """The container's network namespace (interfaces, addresses, routes) from /proc/net, in one exec as the run uid."""
    try:
        exec_id = client.api.exec_create(container_id, ["sh", "-c", NETNS_SCRIPT], stdout=True, stderr=False,
                                         user=EXEC_USER, environment=EXEC_ENVIRONMENT)["Id"]
        output = client.api.exec_start(exec_id)
    except (APIError, NotFound) as exc:
        raise ObserveError(f"could not read the server's network namespace: {api_message(exc)}") from exc
    try:
        return parse_namespace((output if isinstance(output, bytes) else b"").decode("utf-8", errors="replace"))
    except NamespaceUnread as exc:
        raise ObserveError(str(exc)) from exc


__all__ = ["ObserveError", "api_message", "extract_tar"]  # kept here for the callers that look through observe
