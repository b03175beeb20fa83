"""Run phase: a fresh, hardened container from the installed image, attached before start, policy verified after.

The run container keeps no log (log driver `none`): its stdio is attached, and the engine's default json-file driver
would also write everything it prints to disk, so a server printing hundreds of MB keeps the engine busy (API calls
then time out). Its stderr is kept from the attach stream instead (RunningServer.stderr).
"""

from __future__ import annotations

import socket
import time
from dataclasses import dataclass, field
from typing import Any

import requests
from docker.errors import APIError, NotFound

from sandbox.core.errors import PolicyNotApplied
from sandbox.core.session import SandboxSession
from sandbox.core.untrusted import decode_bytes
from sandbox.run import policy as policy_mod
from sandbox.run.attach import StderrTail, StreamLimits
from sandbox.run.policy import AppliedPolicy, RunPolicy
from sandbox.run.start_gate import gated_command

ATTACH_PARAMS = {"stdin": 1, "stdout": 1, "stderr": 1, "stream": 1}
EOF_GRACE = 2.0  # how long a server may take to exit once its stdin closed
TERM_GRACE = 2.0  # then once it got SIGTERM
KILL_WAIT = 5.0  # then once it got SIGKILL (the session's teardown removes it anyway)
RETRY_SECONDS = 0.1  # before the engine's wait is asked again, when it failed with time left
NO_LOG = {"Type": "none", "Config": {}}
# A container image's HEALTHCHECK would have the engine exec its command in the sandbox every interval, beside the
# server and outside its process tree, between and during the looks: never asked for, so turned off (read back).
NO_HEALTHCHECK = {"Test": ["NONE"]}
STDERR_TAIL_LINES = 40


@dataclass
class RunningServer:
    container_id: str
    socket: socket.socket
    applied: AppliedPolicy
    start_seconds: float
    started_at: float
    stderr: StderrTail = field(default_factory=lambda: StderrTail(StreamLimits().stderr_tail_bytes))
    gated: bool = False  # its command waits at the start gate until its seeding opens it (sandbox/run/start_gate.py)


def start_server(session: SandboxSession, image: str, command: list[str], run_policy: RunPolicy,
                 working_dir: str = policy_mod.WORKSPACE) -> RunningServer:
    """Create the run container, attach to its stdio, start it, and check the engine applied the whole policy."""
    return start_created(session, create_server(session, image, command, run_policy, working_dir))


@dataclass
class CreatedServer:
    """A run container created, attached and its policy checked, not started yet (`start_created` starts it)."""

    container_id: str
    socket: socket.socket
    applied: AppliedPolicy
    began: float  # when its creation began (time.monotonic())
    gated: bool = False


def create_server(session: SandboxSession, image: str, command: list[str], run_policy: RunPolicy,
                  working_dir: str = policy_mod.WORKSPACE) -> CreatedServer:
    """Create the run container, attach to its stdio and check the engine applied the whole policy; the container
    does not run yet. In "observe" mode its network namespace's sink must exist (it need not be ready).
    `working_dir`: the workspace, or a container image's own WORKDIR (sandbox/run/image_source.py)."""
    api = session.client.api
    began = time.monotonic()
    host_config = {**run_policy.host_config(api), "LogConfig": NO_LOG}
    environment = run_policy.environment()
    container_id = session.create_container(
        "run",
        image=image,
        command=gated_command(command, environment) if run_policy.start_gate else command,
        entrypoint=[],
        user=run_policy.user,
        environment=environment,
        working_dir=working_dir,
        stdin_open=True,
        tty=False,
        network_disabled=run_policy.network_mode == "none",
        # The engine refuses a host name beside network mode container:<sink>; the sink carries it then.
        hostname=run_policy.hostname if run_policy.network_mode == policy_mod.STRICT_NETWORK else None,
        host_config=host_config,
        healthcheck=NO_HEALTHCHECK,
    )
    sock = _raw_socket(api.attach_socket(container_id, params=ATTACH_PARAMS))
    try:
        inspect = api.inspect_container(container_id)
        applied = policy_mod.read_applied(inspect)
        policy_mod.enforce(run_policy, applied)
        _enforce_no_log(inspect)
        _enforce_no_healthcheck(inspect)
    except BaseException:
        sock.close()
        raise
    return CreatedServer(container_id, sock, applied, began, gated=run_policy.start_gate)


def start_created(session: SandboxSession, created: CreatedServer) -> RunningServer:
    """Start a created run container; `start_seconds` counts from its creation."""
    try:
        session.client.api.start(created.container_id)
    except BaseException:
        created.socket.close()
        raise
    started = time.monotonic()
    return RunningServer(created.container_id, created.socket, created.applied, round(started - created.began, 3),
                         started, gated=created.gated)


@dataclass(frozen=True)
class Ending:
    """How the server ended at teardown: `eof` (it exited once its stdin closed), `sigterm` (it ignored EOF),
    `sigkill` (it ignored SIGTERM too), `exited before` (it had exited already) or `unknown` (no answer)."""

    ended_by: str
    exit_code: int | None
    seconds: float


def end_server(session: SandboxSession, server: RunningServer, *, exited_before: bool = False) -> Ending:
    """Close the server's stdin (the container was created with StdinOnce: closing the attach is EOF), wait; then
    SIGTERM, wait; then SIGKILL. Bounded: EOF_GRACE + TERM_GRACE + KILL_WAIT at most, plus the engine's calls."""
    began = time.monotonic()
    if exited_before:
        return Ending("exited before", exit_code(session, server.container_id), 0.0)
    close_attach(server)
    steps: tuple[tuple[str, str | None, float], ...] = (
        ("eof", None, EOF_GRACE), ("sigterm", "SIGTERM", TERM_GRACE), ("sigkill", "SIGKILL", KILL_WAIT))
    for name, signal, grace in steps:
        if signal is not None:
            try:
                session.client.api.kill(server.container_id, signal=signal)
            except APIError:  # gone already (NotFound, 409 not running), or no answer
                pass
        code = _wait_exit(session, server.container_id, grace)
        if code is not None:
            return Ending(name, code, round(time.monotonic() - began, 3))
    return Ending("unknown", None, round(time.monotonic() - began, 3))


def _wait_exit(session: SandboxSession, container_id: str, grace: float) -> int | None:
    """The exit code once the server exited, None if it still runs after `grace` seconds. The engine's wait answers
    as the container stops, so the exit is seen at once (a server usually exits within a few tenths of a second of
    EOF). A wait that failed before the grace ran out (the engine's error) is tried again RETRY_SECONDS later; what
    no wait said is asked of the container's state."""
    deadline = time.monotonic() + grace
    while (left := deadline - time.monotonic()) > 0:
        try:
            answer = session.client.api.wait(container_id, timeout=left, condition="not-running")
        except NotFound:  # gone: no exit code to read
            return None
        except (APIError, requests.exceptions.ConnectionError):  # no answer, or the grace ran out (a read timeout)
            time.sleep(min(RETRY_SECONDS, max(0.0, deadline - time.monotonic())))
            continue
        code = answer.get("StatusCode") if isinstance(answer, dict) else None
        if isinstance(code, int):
            return code
        break
    return exit_code(session, container_id)


def exit_code(session: SandboxSession, container_id: str) -> int | None:
    """The server's exit code if it has exited, else None (also when the engine cannot say: gone, or no answer)."""
    try:
        state: dict[str, Any] = session.client.api.inspect_container(container_id).get("State") or {}
    except APIError:  # NotFound, EngineTimeout
        return None
    return None if state.get("Running") else int(state.get("ExitCode", -1))


def stderr_tail(server: RunningServer, lines: int = STDERR_TAIL_LINES) -> str:
    """The last lines the server wrote to stderr, from the attach stream (crash evidence; decoded, untrusted)."""
    text, _ = decode_bytes(bytes(server.stderr.data))
    return "\n".join(text.splitlines()[-lines:])[-4_000:]


def _enforce_no_log(inspect: dict[str, Any]) -> None:
    log_type = ((inspect.get("HostConfig") or {}).get("LogConfig") or {}).get("Type")
    if log_type != "none":
        raise PolicyNotApplied(f"log driver: asked 'none', engine applied {log_type!r}")


def _enforce_no_healthcheck(inspect: dict[str, Any]) -> None:
    test = ((inspect.get("Config") or {}).get("Healthcheck") or {}).get("Test")
    if test is not None and test != NO_HEALTHCHECK["Test"]:
        raise PolicyNotApplied(f"healthcheck: asked none, engine applied {str(test)[:200]!r}")


def close_attach(server: RunningServer) -> None:
    """Shut the attach connection down for real. A plain close() leaves the descriptor open while docker-py's
    wrapper still references it; the engine would then block writing a chatty server's output into a socket nobody
    reads, and removing the container would wait on that forever."""
    try:
        server.socket.shutdown(socket.SHUT_RDWR)
    except OSError:
        pass
    server.socket.close()


def _raw_socket(attached: Any) -> socket.socket:
    """docker-py returns a SocketIO wrapper for unix sockets; the event loop wants the socket itself."""
    raw = getattr(attached, "_sock", attached)
    if not isinstance(raw, socket.socket):
        raise TypeError(f"unexpected attach socket type {type(raw).__name__}")
    return raw
