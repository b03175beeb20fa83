"""The long-lived observer inside a running sandbox (docs/observer.md): one Docker exec, started right after the
seeding and before the server is sent anything, that answers each snapshot request over its own exec stream, so a
look after a call costs a round trip instead of an exec (~100 ms each).

It runs sandbox/run/observer_agent.py with `python3 -I -S -c` as the run uid with a group of its own
(OBSERVER_GID): the server has the same uid but not the same group, so the kernel lets it neither ptrace the
observer nor open its /proc fds or memory (and the agent is non-dumpable as well). The server can still signal it:
the stream ending, an answer not within the timeout, or one that is not framed with this request's nonce, each
loses the observer for good, and every later look is one exec again (`Watch`), with the reason kept for the report.
"""

from __future__ import annotations

import dataclasses
import json
import re
import secrets
import socket
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import docker
from docker.errors import APIError, NotFound

from sandbox.run import observe
from sandbox.run.exec_stream import EXEC_ENVIRONMENT, FRAME, api_message, exec_exit_code
from sandbox.run.policy import RUN_UID

OBSERVER_GID = 10009  # no user or file of the images has it: the observer's only difference from the server
OBSERVER_USER = f"{RUN_UID}:{OBSERVER_GID}"
START_TIMEOUT = 20.0  # python3 starting on a loaded machine
REQUEST_TIMEOUT = 15.0  # a listing up to the size cap; a stopped observer is given up on after this
_AGENT = Path(__file__).with_name("observer_agent.py")
_MARK = b"@@MCP-SANDBOX-OBSERVER@@"
_OPENED = b"@@MCP-SANDBOX-OPENED@@ "  # the first line of each answer's body: the watched files' opens (the agent's)
_CLOSE = b"@@MCP-SANDBOX-OBSERVED@@"
_COUNTERS_ROOM = 65_536  # the counters and marks before the capped listing
_TABLE_ROOM = (1 << 20) + 3  # a `look` answer's process table (the agent's cap, and its `cut`)
_READY = re.compile(rb"ready pid=(\d+) gid=(\d+) dumpable=(yes|no)")


class ObserverLost(Exception):
    """The observer stopped answering as it must (exited, stopped, garbled); the reason is the message."""


def agent_command(opens: tuple[str, ...] = ()) -> list[str]:
    """`python3 -I -S -c SOURCE SETTINGS`: the agent's source and the snapshot script's settings, nothing secret
    (`opens`: the files whose opens it watches, the canaries' paths, not their contents)."""
    settings = {"opens": list(opens), "watched": list(observe.WATCHED), "cgroup_files": list(observe.CGROUP_FILES),
                "cgroup_mark": observe.CGROUP_MARK, "listing_mark": observe.LISTING_MARK,
                "end_mark": observe.END_MARK, "max_bytes": observe.MAX_SNAPSHOT_BYTES}
    return ["python3", "-I", "-S", "-c", _AGENT.read_text(encoding="utf-8"), json.dumps(settings)]


@dataclass
class _Stream:
    """The exec's raw socket and what its stdout and stderr have said that was not consumed yet."""

    raw: socket.socket
    stdout: bytearray = field(default_factory=bytearray)
    stderr: bytearray = field(default_factory=bytearray)
    pending: bytearray = field(default_factory=bytearray)  # an incomplete frame

    def read_until(self, ready: Any, deadline: float, what: str) -> Any:
        """Read frames until `ready(stdout)` returns a value (not None); ObserverLost at EOF or the deadline."""
        while True:
            got = ready(self.stdout)
            if got is not None:
                return got
            left = deadline - time.monotonic()
            if left <= 0:
                raise ObserverLost(f"no {what} within the timeout (the observer was stopped, or is stuck)")
            self.raw.settimeout(left)
            try:
                chunk = self.raw.recv(262_144)
            except TimeoutError:
                continue
            except OSError as exc:
                raise ObserverLost(f"the observer's stream failed: {exc}") from exc
            if not chunk:
                raise ObserverLost("the observer's stream ended (the observer exited or was killed)")
            self._split(chunk)

    def _split(self, chunk: bytes) -> None:
        self.pending.extend(chunk)
        while len(self.pending) >= FRAME.size:
            kind, size = FRAME.unpack_from(self.pending)
            if kind not in (1, 2):
                raise ObserverLost("the observer's stream is not the engine's framing")
            if len(self.pending) < FRAME.size + size:
                return
            payload = bytes(self.pending[FRAME.size: FRAME.size + size])
            del self.pending[: FRAME.size + size]
            if kind == 1:
                self.stdout.extend(payload)
            elif len(self.stderr) < 4_096:
                self.stderr.extend(payload)


Signature = tuple[tuple[int, int, int, str], ...]  # the pid namespace's processes: (pid, ppid, start, args), sorted


def parse_table(table: bytes) -> Signature | None:
    """The process table of a `look` answer, sorted; None when it is not whole (cut at its cap, or unreadable)."""
    if not table.endswith(b"\0"):
        return None
    rows = []
    for record in table[:-1].split(b"\0"):
        fields = record.split(b"\t", 3)
        if len(fields) != 4 or not all(field.isdigit() for field in fields[:3]):
            return None
        rows.append((int(fields[0]), int(fields[1]), int(fields[2]), fields[3].decode("utf-8", "replace")))
    return tuple(sorted(rows))


class Observer:
    """A started observer: `snapshot()` / `look()` ask it for one look (raise ObserverLost), `close()` ends it."""

    def __init__(self, api: Any, exec_id: str, stream: _Stream, host_pid: int | None,
                 timeout: float = REQUEST_TIMEOUT, opens: tuple[str, ...] = ()) -> None:
        self.api, self.exec_id, self.stream, self.host_pid, self.timeout = api, exec_id, stream, host_pid, timeout
        self.opens = opens  # the files whose opens the agent watches (their indexes are what it answers)
        self.opens_unwatched: str | None = None  # why the agent could not watch them, once an answer said so

    def snapshot(self) -> observe.Snapshot:
        return self.look(with_processes=False)[0]

    def look(self, with_processes: bool = True) -> tuple[observe.Snapshot, Signature | None]:
        """One snapshot, and with `with_processes` the sandbox's process table taken right after it in the same
        answer (None: not whole)."""
        nonce = secrets.token_hex(16).encode()
        try:
            self.stream.raw.sendall((b"look " if with_processes else b"snapshot ") + nonce + b"\n")
        except OSError as exc:
            raise ObserverLost(f"the observer no longer reads its requests: {exc}") from exc
        body, table = self.stream.read_until(lambda out: _framed_parts(out, nonce, with_processes),
                                             time.monotonic() + self.timeout, "answer from the observer")
        opened, rest = self._opened(body[: len(body) - table])
        # the opens need no listing: a look whose listing failed still says them (its call's record has no diff)
        snapshot = dataclasses.replace(observe.parse_snapshot(rest, taken_at=time.time()), opened=opened)
        return snapshot, parse_table(body[len(body) - table:]) if with_processes else None

    def _opened(self, body: bytes) -> tuple[tuple[str, ...], bytes]:
        """The watched files opened since the last answer, and the rest of the body (ObserverLost when the first
        line is not the agent's); a watch the agent could not set is kept in `opens_unwatched`."""
        line, _, rest = body.partition(b"\n")
        if not line.startswith(_OPENED):
            raise ObserverLost("the observer's answer is garbled (no opens line)")
        state, _, indexes = line.removeprefix(_OPENED).partition(b" ")
        if state != b"ok":
            if state != b"none":
                self.opens_unwatched = state.decode("ascii", "replace")[:200]
            return (), rest
        try:
            return tuple(self.opens[int(index)] for index in indexes.split(b",") if index), rest
        except (ValueError, IndexError):
            raise ObserverLost(f"the observer's answer is garbled (opens {indexes[:80]!r})") from None

    def exit_reason(self) -> str:
        """How the observer ended, as far as the engine knows (its exit code: 137 is SIGKILL)."""
        try:
            code = exec_exit_code(self.api, self.exec_id, wait=1.0)
        except (APIError, NotFound):
            return "its exit code is unknown"
        return "it is still running" if code is None else f"it exited with code {code}"

    def close(self) -> None:
        try:
            self.stream.raw.close()
        except OSError:
            pass


def _framed(out: bytearray, nonce: bytes) -> bytes | None:
    """The answer's body once whole, None while it is not; ObserverLost when what came is not this answer."""
    whole = _framed_parts(out, nonce, False)
    return None if whole is None else whole[0]


def _framed_parts(out: bytearray, nonce: bytes, with_table: bool) -> tuple[bytes, int] | None:
    """(body, how many of its last bytes are the process table) once whole, None while it is not; ObserverLost when
    what came is not this answer (a `look` answer has the table's length as a fourth word, a snapshot's has none)."""
    header_end = out.find(b"\n")
    if header_end < 0:
        if len(out) > 200:
            raise ObserverLost("the observer's answer is garbled (no header)")
        return None
    words = bytes(out[:header_end]).split(b" ")
    if (len(words) != 3 + with_table or words[0] != _MARK or words[1] != nonce
            or not all(word.isdigit() for word in words[2:])):
        raise ObserverLost(f"the observer's answer is garbled (header {bytes(out[:80])!r})")
    size, table = int(words[2]), int(words[3]) if with_table else 0
    if size > observe.MAX_SNAPSHOT_BYTES + _COUNTERS_ROOM + table or table > min(size, _TABLE_ROOM):
        raise ObserverLost(f"the observer's answer is garbled ({size} bytes, over the cap)")
    close = _CLOSE + b" " + nonce + b"\n"
    end = header_end + 1 + size
    if len(out) < end + len(close):
        return None
    if bytes(out[end: end + len(close)]) != close:
        raise ObserverLost("the observer's answer is garbled (its end mark is wrong)")
    body = bytes(out[header_end + 1: end])
    del out[: end + len(close)]
    if out:
        raise ObserverLost("the observer said more than its answer")
    return body, table


def start_observer(client: docker.DockerClient, container_id: str, *, timeout: float = START_TIMEOUT,
                   request_timeout: float = REQUEST_TIMEOUT, opens: tuple[str, ...] = ()) -> Observer | str:
    """Start the observer in the running sandbox and wait for its ready line: the Observer, or why it could not
    start (no python3 in a foreign image, the engine refused, it is not protected), for the exec path to take over.
    `opens`: the files whose opens and reads it watches from its first answer on (the planted canaries)."""
    api = client.api
    try:
        exec_id = api.exec_create(container_id, agent_command(opens), stdin=True, stdout=True, stderr=True,
                                  user=OBSERVER_USER, environment=EXEC_ENVIRONMENT)["Id"]
        attached = api.exec_start(exec_id, socket=True)
    except (APIError, NotFound) as exc:
        return f"the engine refused its exec: {api_message(exc)}"
    stream = _Stream(getattr(attached, "_sock", attached))
    try:
        ready = stream.read_until(_ready_line, time.monotonic() + timeout, "ready line")
    except ObserverLost as exc:
        stream.raw.close()
        said = stream.stderr.decode("utf-8", errors="replace").strip().splitlines()
        return f"{exc}{': ' + said[-1][:200] if said else ''}"
    if ready != (str(OBSERVER_GID), "no"):
        stream.raw.close()
        return f"it is not protected from the server (gid {ready[0]}, dumpable {ready[1]})"
    try:
        pid = api.exec_inspect(exec_id).get("Pid")
    except (APIError, NotFound):
        pid = None
    return Observer(api, exec_id, stream, pid if isinstance(pid, int) and pid > 0 else None, request_timeout, opens)


def _ready_line(out: bytearray) -> tuple[str, str] | None:
    end = out.find(b"\n")
    if end < 0:
        return None
    line = bytes(out[:end])
    del out[: end + 1]
    found = _READY.fullmatch(line.removeprefix(_MARK + b" "))
    if not line.startswith(_MARK) or found is None:
        raise ObserverLost(f"the observer did not start as expected (it said {line[:120]!r})")
    return found.group(2).decode(), found.group(3).decode()
