"""The observer that runs inside the sandbox (see docs/observer.md): its source is sent as `python3 -I -S -c SOURCE`
by sandbox.run.observer with its settings as argv[1] (JSON), run as the run uid with a group of its own, so the server (same uid, the run group) can
signal it but cannot ptrace it, open its fds or read its memory. It also makes itself non-dumpable.

It reads one request a line on stdin (`snapshot NONCE` or `look NONCE`, NONCE 32 hex digits) and answers on stdout:

    @@MCP-SANDBOX-OBSERVER@@ NONCE LENGTH\\n<LENGTH bytes>@@MCP-SANDBOX-OBSERVED@@ NONCE\\n

where the bytes are exactly what sandbox.run.observe's snapshot script prints (counters with the shell's line
format, the marks, find's `-printf` records, its end mark and status, cut at the same cap), so one parser reads both.
`look` answers the same snapshot followed by the sandbox's process table, the header then saying how long that
table is: `@@MCP-SANDBOX-OBSERVER@@ NONCE LENGTH TABLE` (TABLE of the LENGTH bytes are the table's, at the end):
one `PID\\tPPID\\tSTARTTIME\\tARGS\\0` record per process of the sandbox's pid namespace (its own pids; STARTTIME in
clock ticks since boot, field 22 of /proc/PID/stat; ARGS the command line, NULs as spaces, at most 500 bytes).
No fork per look: the counters and the listing are read in this process. Standard library only; this module is
also imported by the tests, which compare its output with find's.

The files named in the settings' "opens" (the planted canaries) are watched with inotify from the first request on
(seeding plants them while the observer starts): every answer's body begins with `@@MCP-SANDBOX-OPENED@@ ok I,J\n`,
the indexes of those opened or read since the last answer, which the kernel reports even when the reader keeps the
access time still (O_NOATIME, which the owner of a file may use), or `@@MCP-SANDBOX-OPENED@@ failed:WHY\n`.
"""

import os
import stat
import struct
import sys

MARK = b"@@MCP-SANDBOX-OBSERVER@@"
CLOSE = b"@@MCP-SANDBOX-OBSERVED@@"
OPENED = b"@@MCP-SANDBOX-OPENED@@"
IN_ACCESS, IN_OPEN, IN_Q_OVERFLOW = 0x1, 0x20, 0x4000
IN_NONBLOCK, IN_CLOEXEC = 0o4000, 0o2000000
READ_TRIES = 3  # reads of a folder whose entries vanish while it is listed, before the listing is not whole
_EVENT = struct.Struct("iIII")  # struct inotify_event: wd, mask, cookie, len (then len bytes of name)
_KINDS = ((stat.S_ISREG, b"f"), (stat.S_ISDIR, b"d"), (stat.S_ISLNK, b"l"), (stat.S_ISFIFO, b"p"),
          (stat.S_ISSOCK, b"s"), (stat.S_ISCHR, b"c"), (stat.S_ISBLK, b"b"))


class _Capped:
    """The answer's bytes, cut at `limit` like `| head -c limit`."""

    def __init__(self, limit):
        self.parts, self.size, self.limit = [], 0, limit

    def add(self, data):
        room = self.limit - self.size
        if room <= 0:
            return False
        piece = data[:room]
        self.parts.append(piece)
        self.size += len(piece)
        return self.size < self.limit

    def value(self):
        return b"".join(self.parts)


def counters_text(files):
    """Each readable cgroup file as `PATH LINE LINE \\n`, like the snapshot script's builtin loop."""
    out = []
    for path in files:
        try:
            with open(path, "rb") as handle:
                data = handle.read()
        except OSError:
            continue
        lines = data.split(b"\n")
        if lines and lines[-1] == b"":
            lines.pop()
        out.append(path.encode() + b" " + b"".join(line + b" " for line in lines) + b"\n")
    return b"".join(out)


def _time(ns):
    seconds, rest = divmod(ns, 1_000_000_000)
    return b"%d.%09d0" % (seconds, rest)


def _record(path, info):
    kind = next((letter for test, letter in _KINDS if test(info.st_mode)), b"U")
    return b"%s\t%d\t%s\t%s\t%s\t%o\t%s\0" % (kind, info.st_size, _time(info.st_mtime_ns), _time(info.st_atime_ns),
                                              _time(info.st_ctime_ns), stat.S_IMODE(info.st_mode), path)


def listing(out, roots):
    """find ROOTS -xdev -printf '%y\\t%s\\t%T@\\t%A@\\t%C@\\t%m\\t%p\\0' into `out`; returns find's exit status (1 when any
    path could not be read). Stops early once `out` is full (the caller's cap)."""
    status = 0
    for root in roots:
        try:
            info = os.lstat(root)
        except OSError:
            status = 1
            continue
        stack = [(root, info)]
        device = info.st_dev
        while stack:
            path, info = stack.pop()
            if not out.add(_record(path, info)):
                return status
            if not stat.S_ISDIR(info.st_mode) or info.st_dev != device:
                continue
            children, whole = entries(path)
            status = status if whole else 1
            stack.extend(reversed(children))
    return status


def entries(path, tries=READ_TRIES):
    """A folder's entries with their lstat, and whether every one was read. An entry that vanished between the
    folder's listing and its lstat (a temporary file, a save by rename) has the folder read again, up to `tries`
    times: only a folder whose entries keep vanishing (or any other error) makes the listing not whole, as find's."""
    children, whole = [], False
    for _ in range(tries):
        try:
            names = os.listdir(path)
        except OSError:
            return [], False
        children, whole, vanished = [], True, False
        for name in names:
            child = path + b"/" + name
            try:
                children.append((child, os.lstat(child)))
            except FileNotFoundError:
                whole, vanished = False, True
            except OSError:
                whole = False
        if not vanished:
            break
    return children, whole


def snapshot_bytes(config, waits=None):
    """What the snapshot script prints: `config` names the cgroup files, the marks, the watched roots, the cap;
    `waits` (a RunQueue) adds the run-queue wait to the counters, which the script cannot keep (it has no state)."""
    head = (counters_text(config["cgroup_files"]) + (waits.line() if waits is not None else b"")
            + config["cgroup_mark"].encode() + b"\n"
            + config["listing_mark"].encode() + b"\n")
    out = _Capped(config["max_bytes"])  # the listing and its end mark only, as the script's `| head -c`
    status = listing(out, [os.fsencode(root) for root in config["watched"]])
    out.add(b"\0" + config["end_mark"].encode() + b" %d\n" % status)
    return head + out.value()


def process_table(proc=b"/proc", limit=1 << 20):
    """The pid namespace's processes as `look` prints them; a process that ends while it is read is left out (it
    is gone). Past `limit` bytes it ends with `cut` instead of a record: not whole (the host then asks the engine)."""
    parts, size = [], 0
    for name in os.listdir(proc):
        if not name.isdigit():
            continue
        try:
            with open(proc + b"/" + name + b"/stat", "rb") as handle:
                stat_line = handle.read()
            with open(proc + b"/" + name + b"/cmdline", "rb") as handle:
                command = handle.read(4096)
        except OSError:
            continue
        comm_end = stat_line.rfind(b")")
        fields = stat_line[comm_end + 2:].split()
        if comm_end < 0 or len(fields) < 20:
            continue
        args = command.rstrip(b"\0").replace(b"\0", b" ").replace(b"\t", b" ")[:500]
        if not args:
            args = b"[" + stat_line[stat_line.find(b"(") + 1: comm_end] + b"]"
        record = b"%s\t%s\t%s\t%s\0" % (name, fields[1], fields[19], args)
        if size + len(record) > limit:
            parts.append(b"cut")
            break
        parts.append(record)
        size += len(record)
    return b"".join(parts)


class RunQueue:
    """The time the sandbox's threads spent ready to run but waiting for a CPU (the kernel's schedstat run_delay),
    summed from the first look on: on a machine whose other work holds the CPUs, a thread left spinning gets a small
    share of them and spends the rest of its time here. The processes the engine started (parent 0 and not pid 1: this
    observer, a look by exec) are left out. Each thread counts what it waited since the look before (all it waited,
    when new); what a thread that ended between two looks waited after the first of them is not counted."""

    def __init__(self, proc=b"/proc"):
        self.proc, self.seen, self.total = proc, {}, 0

    def _threads(self):
        for name in os.listdir(self.proc):
            if not name.isdigit():
                continue
            base = self.proc + b"/" + name
            try:
                with open(base + b"/stat", "rb") as handle:
                    stat_line = handle.read()
                tids = os.listdir(base + b"/task")
            except OSError:
                continue
            fields = stat_line[stat_line.rfind(b")") + 2:].split()
            if len(fields) < 20 or (fields[1] == b"0" and name != b"1"):
                continue
            for tid in tids:
                yield (tid, fields[19]), base + b"/task/" + tid + b"/schedstat"

    def line(self):
        """`runqueue-wait-ns N` (the counters' line format), or nothing when no thread's schedstat could be read."""
        now = {}
        for key, path in self._threads():
            try:
                with open(path, "rb") as handle:
                    now[key] = int(handle.read().split()[1])
            except (OSError, ValueError, IndexError):
                continue
            self.total += max(0, now[key] - self.seen.get(key, 0))
        self.seen = now
        return b"runqueue-wait-ns %d\n" % self.total if now else b""


class Opens:
    """The inotify watches on the files named in `paths`, set at the first `line()` (once seeding planted them)."""

    def __init__(self, paths):
        self.paths, self.fd, self.watches, self.state = paths, None, {}, None

    def _start(self):
        if not self.paths:
            return b"none"
        try:
            import ctypes
            libc = ctypes.CDLL(None, use_errno=True)
        except (OSError, ImportError):
            return b"failed:no-ctypes"
        fd = libc.inotify_init1(IN_NONBLOCK | IN_CLOEXEC)
        if fd < 0:
            return b"failed:inotify_init1-errno-%d" % ctypes.get_errno()
        for index, path in enumerate(self.paths):
            wd = libc.inotify_add_watch(fd, os.fsencode(path), IN_ACCESS | IN_OPEN)
            if wd < 0:
                os.close(fd)
                return b"failed:inotify_add_watch-errno-%d-file-%d" % (ctypes.get_errno(), index)
            self.watches[wd] = index
        self.fd = fd
        return b"ok"

    def line(self):
        """The answer's first line: the watched files opened or read since the last answer (all of them when the
        kernel's queue overflowed: only their opens fill it), or why they are not watched."""
        if self.state is None:
            self.state = self._start()
        if self.fd is None:
            return OPENED + b" " + self.state + b"\n"
        opened = set()
        while True:
            try:
                data = os.read(self.fd, 65536)
            except BlockingIOError:
                break
            offset = 0
            while offset + _EVENT.size <= len(data):
                wd, mask, _, length = _EVENT.unpack_from(data, offset)
                offset += _EVENT.size + length  # a name follows only events on a folder's entries
                if mask & IN_Q_OVERFLOW:
                    opened.update(self.watches.values())
                elif mask & (IN_ACCESS | IN_OPEN) and wd in self.watches:
                    opened.add(self.watches[wd])
        return OPENED + b" ok " + b",".join(b"%d" % index for index in sorted(opened)) + b"\n"


def _non_dumpable():
    """prctl(PR_SET_DUMPABLE, 0), then read back (PR_GET_DUMPABLE): True when this process is non-dumpable."""
    try:
        import ctypes
        libc = ctypes.CDLL(None, use_errno=True)
        libc.prctl(4, 0, 0, 0, 0)
        return libc.prctl(3, 0, 0, 0, 0) == 0
    except (OSError, AttributeError, ImportError):
        return False


def serve(stdin, stdout, config):
    dumpable = b"no" if _non_dumpable() else b"yes"
    stdout.write(MARK + b" ready pid=%d gid=%d dumpable=%s\n" % (os.getpid(), os.getgid(), dumpable))
    stdout.flush()
    opens, waits = Opens(config.get("opens") or []), RunQueue()
    for line in stdin:
        words = line.split()
        if len(words) != 2 or words[0] not in (b"snapshot", b"look") or len(words[1]) != 32 or not words[1].isalnum():
            stdout.write(MARK + b" refused\n")
            stdout.flush()
            continue
        nonce = words[1]
        body = opens.line() + snapshot_bytes(config, waits)
        table = process_table() if words[0] == b"look" else None
        if table is None:
            header = MARK + b" %s %d\n" % (nonce, len(body))
        else:
            body += table
            header = MARK + b" %s %d %d\n" % (nonce, len(body), len(table))
        stdout.write(header + body + CLOSE + b" %s\n" % nonce)
        stdout.flush()


if __name__ == "__main__":
    import json
    serve(sys.stdin.buffer, sys.stdout.buffer, json.loads(sys.argv[1]))
