"""A fork server for the embedded batch: one process that imports the scan's modules once, then forks a child per
target that runs `mcp-sandbox scan` with them already loaded.

A child `mcp-sandbox scan` started afresh spends seconds importing (pydantic models of the MCP types, the pipeline,
the probes) before its scan begins, and exiting after it: on a loaded 2-core machine 4-8 s a target, a third of a
small cached scan. Forked from a server that imported it all once, a child starts at once. It is still one process
per target, as before: a crash or an OOM kill takes one scan; each child starts its own session (a Ctrl-C at the
terminal reaches the coordinator alone), gets SIGTERM when the server dies, and the server gets SIGTERM when the
coordinator dies (so a SIGKILLed batch still has its scans tear their sandboxes down); each scan labels its sandbox
with its own pid, as a child scan did.

The server starts no thread and opens no connection before it forks (the imports only), so a child inherits no lock
or socket; what the imports made is frozen out of the garbage collector (gc.freeze), so a child's collections do not
copy the pages it shares with the server. Protocol, JSON lines: the coordinator writes {"id", "argv", "stderr"} to the server's stdin; the server
answers {"id", "pid"} when the child runs, {"id", "exit"} (negative: the signal) when it ended, {"id", "error",
"errno"} when it could not start the child (its stderr file could not be opened, fork failed: EAGAIN under a pids
limit, ENOMEM, EMFILE; that one request fails, the server and its other children go on), and `ready` once at start.
When its stdin closes (the coordinator is gone), the server SIGTERMs its children and exits when they have.

Should the server die anyway (killed, or killed by the coordinator when it stopped answering), its children get
SIGTERM and tear their sandboxes down; each is reported ended only once its process is gone (watched through a
pidfd), with that reason, so its retry never starts beside it.

The coordinator side (ForkServer, ForkedScan) gives each child the Popen methods the backend uses.
"""

from __future__ import annotations

import ctypes
import gc
import importlib
import json
import os
import select
import signal
import subprocess
import sys
import time
from pathlib import Path
from typing import IO, Any

READY = "ready"
# The modules a scan imports that take the time (python -X importtime of a real scan); the rest come with them.
CLI_MODULE = "scanner.cli.app"
PRELOAD = (CLI_MODULE, "scanner.cli.scan", "scanner.pipeline.scan", "scanner.pipeline.inventory",
           "scanner.pipeline.assemble", "scanner.probes.runner", "scanner.probes.fixtures", "scanner.signing.keys",
           "scanner.config", "scanner.plugins.envelope", "scanner.pipeline.doors", "scanner.vet.parse_py",
           "sandbox.install.proxy.upstream", "httpcore", "rich.console", "rich.status")
SERVER_COMMAND = [sys.executable, "-m", "scanner.batch.fork_server"]
START_TIMEOUT_SECONDS = 120.0
ANSWER_TIMEOUT_SECONDS = 30.0
POLL_SECONDS = 0.05
END_GRACE_SECONDS = 90.0
PR_SET_PDEATHSIG = 1


class ForkServerError(RuntimeError):
    """The server did not start or stopped answering (the backend then starts each scan afresh)."""


def die_with_parent(parent: int) -> None:
    """In a child: SIGTERM when `parent` dies (and at once if it already has); nothing where prctl is missing."""
    try:
        libc = ctypes.CDLL(None, use_errno=True)
        libc.prctl(PR_SET_PDEATHSIG, signal.SIGTERM)
    except (OSError, AttributeError):
        return  # not Linux: a SIGKILLed batch leaves its scans running; gc sweeps what they leave
    if os.getppid() != parent:
        os.kill(os.getpid(), signal.SIGTERM)


# The server side.

def serve() -> dict[str, Any] | None:
    """Fork a child per request until stdin closes; returns the request in a child (which then runs the scan), None
    in the server when it is done."""
    children: dict[int, int] = {}  # pid -> request id
    pending = b""
    _send(READY)
    while True:
        readable, _, _ = select.select([0], [], [], POLL_SECONDS)
        if readable:
            chunk = os.read(0, 65536)
            if not chunk:
                _end(children)
                return None
            pending += chunk
            while b"\n" in pending:
                line, pending = pending.split(b"\n", 1)
                request = json.loads(line)
                try:
                    pid = _fork(request)
                except OSError as exc:  # this request's failure, answered; the server and its children go on
                    _send({"id": request["id"], "error": exc.strerror or str(exc), "errno": exc.errno or 0})
                    continue
                if pid == 0:
                    return request  # the child, out of the server's loop
                children[pid] = int(request["id"])
                _send({"id": request["id"], "pid": pid})
        _reap(children, os.WNOHANG)


def _send(message: Any) -> None:
    sys.stdout.write(json.dumps(message) + "\n")
    sys.stdout.flush()


def _fork(request: dict[str, Any]) -> int:
    """Fork; in the child, its own session, stdin and stdout on /dev/null, stderr to the request's file."""
    server = os.getpid()
    stderr = os.open(str(request["stderr"]), os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    sys.stderr.flush()
    try:
        pid = os.fork()
    except OSError:
        os.close(stderr)
        raise
    if pid:
        os.close(stderr)
        return pid
    os.setsid()
    # SIGINT as a fresh interpreter has it even when the batch started with it ignored (nohup, `cmd &` in a
    # script): the scan turns SIGTERM into SIGINT to tear its sandbox down, and an ignored SIGINT would ignore both.
    signal.signal(signal.SIGINT, signal.default_int_handler)
    die_with_parent(server)
    devnull = os.open(os.devnull, os.O_RDWR)
    for fd, source in ((0, devnull), (1, devnull), (2, stderr)):
        os.dup2(source, fd)
    os.close(devnull)
    os.close(stderr)
    return 0


def _reap(children: dict[int, int], flags: int) -> None:
    while children:
        try:
            pid, status = os.waitpid(-1, flags)
        except ChildProcessError:
            return
        if pid == 0:
            return
        request = children.pop(pid, None)
        if request is not None:
            _send({"id": request, "exit": os.waitstatus_to_exitcode(status)})


def _end(children: dict[int, int]) -> None:
    """The coordinator is gone: end every scan as a Ctrl-C does (each tears its sandbox down), then wait for them."""
    for pid in children:
        try:
            os.kill(pid, signal.SIGTERM)
        except ProcessLookupError:
            pass
    _reap(children, 0)


def run_child(request: dict[str, Any]) -> None:
    """In a forked child (its stdio already on the child's files): run `mcp-sandbox ARGV` as a fresh process would;
    its exit ends this process the usual way (atexit handlers, threads joined)."""
    sys.argv = ["mcp-sandbox", *[str(word) for word in request["argv"]]]
    # By name: the CLI imports the batch (and so this module); the server imported it before it forked.
    importlib.import_module(CLI_MODULE).main()


def main() -> None:
    for name in PRELOAD:
        importlib.import_module(name)
    # What the imports made is never collected: frozen, a child's collections (and its exit) do not walk it, so do
    # not touch, and copy, every page it shares with the server (without this a child's exit alone takes seconds).
    gc.freeze()
    request = serve()
    if request is not None:
        run_child(request)


# The coordinator side.

class ForkFailed(OSError):
    """The server could not start this one scan (it answered with the error, its errno kept); it goes on."""


class ForkServer:
    """The running server: `spawn` forks a scan, `pump` reads which ended."""

    def __init__(self, log: Path, command: list[str] | None = None) -> None:
        parent = os.getpid()
        with log.open("ab") as stderr:
            self._process = subprocess.Popen(command or SERVER_COMMAND, stdin=subprocess.PIPE,
                                             stdout=subprocess.PIPE, stderr=stderr, start_new_session=True,
                                             preexec_fn=lambda: die_with_parent(parent))
        assert self._process.stdin is not None and self._process.stdout is not None
        self._stdin: IO[bytes] = self._process.stdin
        self._stdout = self._process.stdout.fileno()
        os.set_blocking(self._stdout, False)
        self._pending = b""
        self._next = 0
        self._pids: dict[int, int] = {}
        self._pidfds: dict[int, int] = {}  # request -> a pidfd of its child: gone is gone, whatever reuses the pid
        self._exits: dict[int, int] = {}
        self._errors: dict[int, tuple[int, str]] = {}
        self._lost: dict[int, str] = {}  # request -> why it ended with the server, not on its own
        self._wait_for(lambda message: message == READY, START_TIMEOUT_SECONDS, "start")

    def spawn(self, argv: list[str], stderr: Path) -> ForkedScan:
        """Fork a scan; ForkFailed when the server could not (that scan alone), ForkServerError when the server is
        gone or does not answer in time: it is then killed first (its children with it), as it may yet fork the
        request, and a late pid is adopted rather than a second scan of the job started."""
        self._next += 1
        request = self._next
        try:
            self._stdin.write(json.dumps({"id": request, "argv": argv, "stderr": str(stderr)}).encode() + b"\n")
            self._stdin.flush()
        except (BrokenPipeError, OSError) as exc:
            raise ForkServerError(f"the fork server is gone ({exc})") from None
        try:
            self._wait_for(lambda message: isinstance(message, dict) and message.get("id") == request
                           and ("pid" in message or "error" in message), ANSWER_TIMEOUT_SECONDS, "fork")
        except ForkServerError as exc:
            self.kill()
            if request not in self._pids:
                raise ForkServerError(f"{exc}; it was ended, and the scans it ran with it (each is retried)") from None
        if request in self._errors:
            number, text = self._errors.pop(request)
            raise ForkFailed(number, f"the fork server could not start the scan: {text}")
        return ForkedScan(self, request, self._pids[request])

    def exit_code(self, request: int) -> int | None:
        """The child's exit code once it ended. A server that died took its children with it (SIGTERM): each is
        reported ended, with that reason, once its process is gone (it may be tearing its sandbox down)."""
        self.pump()
        if request not in self._exits and self._process.poll() is not None:
            self.pump()
            if request not in self._exits and self._gone(request):
                self._exits[request] = -signal.SIGTERM
                self._lost[request] = (f"the fork server ended (exit {self._process.returncode}) and this scan, "
                                       "its child, was ended with it (SIGTERM)")
                self._forget(request)
        return self._exits.get(request)

    def lost_reason(self, request: int) -> str | None:
        """Why the request's scan ended, when the server's end ended it (None: it ended on its own)."""
        return self._lost.get(request)

    def signal(self, request: int, signum: int) -> None:
        """Signal the request's child (through its pidfd where there is one: never a process that reused the pid)."""
        fd = self._pidfds.get(request)
        if fd is not None:
            signal.pidfd_send_signal(fd, signum)
        else:
            os.kill(self._pids[request], signum)

    def pump(self) -> list[Any]:
        """Read every message the server has written so far."""
        try:
            while chunk := os.read(self._stdout, 65536):
                self._pending += chunk
        except BlockingIOError:
            pass
        messages = []
        while b"\n" in self._pending:
            line, self._pending = self._pending.split(b"\n", 1)
            message = json.loads(line)
            messages.append(message)
            if isinstance(message, dict) and "pid" in message:
                self._adopt(int(message["id"]), int(message["pid"]))
            elif isinstance(message, dict) and "exit" in message:
                self._exits[int(message["id"])] = int(message["exit"])
                self._forget(int(message["id"]))
            elif isinstance(message, dict) and "error" in message:
                self._errors[int(message["id"])] = (int(message.get("errno") or 0), str(message["error"]))
        return messages

    def kill(self) -> None:
        """End the server now; its children get SIGTERM (each tears its sandbox down). What it wrote is read."""
        if self._process.poll() is None:
            self._process.kill()
        self._process.wait()
        self.pump()

    def close(self, grace: float = END_GRACE_SECONDS) -> None:
        """Close the server's stdin (it ends its children, if any) and wait for it."""
        try:
            self._stdin.close()
        except OSError:
            pass
        try:
            self._process.wait(timeout=grace)
        except subprocess.TimeoutExpired:
            self._process.kill()
            self._process.wait()
        for request in list(self._pidfds):
            self._forget(request)

    def _adopt(self, request: int, pid: int) -> None:
        self._pids[request] = pid
        try:
            self._pidfds[request] = os.pidfd_open(pid)
        except (AttributeError, OSError):  # no pidfd here, or the child is gone already: its pid is watched
            pass

    def _forget(self, request: int) -> None:
        fd = self._pidfds.pop(request, None)
        if fd is not None:
            os.close(fd)

    def _gone(self, request: int) -> bool:
        """Whether the request's child has ended (a zombie has); True for a request the server never forked."""
        if request not in self._pids:
            return True
        fd = self._pidfds.get(request)
        if fd is not None:
            return bool(select.select([fd], [], [], 0)[0])  # a pidfd is readable once its process has exited
        try:
            os.kill(self._pids[request], 0)
        except ProcessLookupError:
            return True
        return False

    def _wait_for(self, wanted: Any, timeout: float, what: str) -> None:
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if any(wanted(message) for message in self.pump()):
                return
            if self._process.poll() is not None:
                self.pump()
                raise ForkServerError(f"the fork server exited ({self._process.returncode}) before it could {what}")
            select.select([self._stdout], [], [], POLL_SECONDS)
        raise ForkServerError(f"the fork server did not {what} within {timeout:.0f} s")


class ForkedScan:
    """One forked scan, with the Popen methods the backend uses (poll, wait, send_signal, returncode)."""

    def __init__(self, server: ForkServer, request: int, pid: int) -> None:
        self._server = server
        self._request = request
        self.pid = pid
        self.returncode: int | None = None

    @property
    def lost(self) -> str | None:
        """Why it ended when the fork server's end ended it (the backend adds it to the scan's stderr tail)."""
        return self._server.lost_reason(self._request)

    def poll(self) -> int | None:
        if self.returncode is None:
            self.returncode = self._server.exit_code(self._request)
        return self.returncode

    def wait(self, timeout: float | None = None) -> int:
        deadline = None if timeout is None else time.monotonic() + timeout
        while self.poll() is None:
            if deadline is not None and time.monotonic() >= deadline:
                raise subprocess.TimeoutExpired(f"scan {self.pid}", timeout or 0.0)
            time.sleep(POLL_SECONDS)
        assert self.returncode is not None
        return self.returncode

    def send_signal(self, signum: int) -> None:
        if self.poll() is None:
            self._server.signal(self._request, signum)


if __name__ == "__main__":
    main()
