"""Labels on everything the sandbox creates, so teardown and `gc` can find it all."""

from __future__ import annotations

import os
import socket
import time
from pathlib import Path

PREFIX = "io.mcp-sandbox"
SESSION = f"{PREFIX}.session"
CREATED = f"{PREFIX}.created"
OWNER_PID = f"{PREFIX}.pid"
OWNER_PID_START = f"{PREFIX}.pid-start"
OWNER_HOST = f"{PREFIX}.host"
OWNER_PID_NAMESPACE = f"{PREFIX}.pid-namespace"
ROLE = f"{PREFIX}.role"
KIND = f"{PREFIX}.kind"

KIND_INSTALLED = "installed"
KIND_RUNTIME = "runtime"
# The repository the install cache tags its images in. The kind label alone does not make an image the cache's: an
# image anyone built carries whatever labels its Dockerfile set (a `docker:` target's), and one built FROM an
# installed image inherits them.
INSTALLED_REPOSITORY = "mcp-sandbox-installed"


def process_start_ticks(pid: int) -> str | None:
    """The process's start time in clock ticks since boot (from /proc), which tells a live pid from a reused one."""
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return None
    # Field 22; the command name (field 2) may hold spaces and parentheses, so split after its last ')'.
    fields = stat[stat.rfind(")") + 2 :].split()
    return fields[19] if len(fields) > 19 else None


def pid_namespace() -> str:
    """This process's pid namespace (`pid:[4026531836]`), "" where it cannot be read. A scanner in a container shares
    the host's hostname under `--network host` but not its pids: the namespace tells the two apart."""
    try:
        return os.readlink("/proc/self/ns/pid")
    except OSError:
        return ""


def session_labels(session_id: str, role: str) -> dict[str, str]:
    """Labels for a resource of this scanner process's session."""
    pid = os.getpid()
    return {
        SESSION: session_id,
        CREATED: str(int(time.time())),
        OWNER_PID: str(pid),
        OWNER_PID_START: process_start_ticks(pid) or "",
        OWNER_HOST: socket.gethostname(),
        OWNER_PID_NAMESPACE: pid_namespace(),
        ROLE: role,
    }


FOREIGN_SESSION_MAX_AGE_SECONDS = 24 * 3600

# For an image committed from a session's container: `docker commit` keeps the container's labels the commit does not
# set, so without these the image would carry the install's session and its (soon dead) owner, and every container
# run from it outside a scan (a user's `docker run`, a benchmark's bare run) would look like a dead scan's leftover to
# the next scan's gc sweep. A commit cannot remove a label, only empty it; gc leaves an empty session label alone.
SESSION_CLEARED = {key: "" for key in (SESSION, OWNER_PID, OWNER_PID_START, OWNER_HOST, OWNER_PID_NAMESPACE, ROLE)}


def owner_alive(labels: dict[str, str], now: float | None = None) -> bool:
    """Whether the scanner process that created a labelled resource may still be running.

    On this host the pid and its start time answer exactly. A session of another host sharing the engine (a scanner
    in a container with the socket mounted), or of another pid namespace under the same hostname (that container run
    with `--network host`), cannot be checked, so it counts as alive for a day. A label without the namespace (a
    scanner from before it was labelled) is checked by its pid. A pid /proc hides (`hidepid`: another user's scanner)
    is asked with signal 0. A creation time that is no number was not written by a scanner (an image's own label,
    inherited by a container run from it by hand): its age cannot be told, so it counts as alive.
    """
    if labels.get(OWNER_HOST) != socket.gethostname() or not _same_pid_namespace(labels):
        try:
            created = float(labels.get(CREATED, "0") or 0)
        except ValueError:
            return True
        return (now or time.time()) - created < FOREIGN_SESSION_MAX_AGE_SECONDS
    try:
        pid = int(labels.get(OWNER_PID, ""))
    except ValueError:
        return False
    start = process_start_ticks(pid)
    if start is None:  # no /proc entry: gone, or another user's hidden from us (/proc mounted with hidepid)
        return _hidden_process(pid)
    return start == labels.get(OWNER_PID_START)


def _hidden_process(pid: int) -> bool:
    """Whether a pid /proc does not show is a process all the same: another user's, which signal 0 may not reach
    (EPERM). Its start time cannot be read, so a reused pid keeps a dead session until that process ends too."""
    if pid <= 0:
        return False
    try:
        os.kill(pid, 0)
    except PermissionError:
        return True
    except (OSError, OverflowError):  # ESRCH: no such process; or a pid past a C long (a label no scanner wrote)
        return False
    return True  # ours, and /proc would not show it: alive all the same


def _same_pid_namespace(labels: dict[str, str]) -> bool:
    theirs = labels.get(OWNER_PID_NAMESPACE, "")
    return not theirs or theirs == pid_namespace()
