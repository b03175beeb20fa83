"""Run phase: a fresh, hardened container from the installed image, attached before start, policy verified after."""

from __future__ import annotations

import socket
import time
from dataclasses import dataclass
from typing import Any

from sandbox.run import policy as policy_mod
from sandbox.run.policy import AppliedPolicy, RunPolicy
from sandbox.core.session import SandboxSession

ATTACH_PARAMS = {"stdin": 1, "stdout": 1, "stderr": 1, "stream": 1}


@dataclass
class RunningServer:
    container_id: str
    socket: socket.socket
    applied: AppliedPolicy
    start_seconds: float
    started_at: float


def start_server(session: SandboxSession, image: str, command: list[str], run_policy: RunPolicy) -> RunningServer:
    """Create the run container, attach to its stdio, start it, and check the engine applied the whole policy."""
    api = session.client.api
    began = time.monotonic()
    container_id = session.create_container(
        "run",
        image=image,
        command=command,
        entrypoint=[],
        user=run_policy.user,
        environment=run_policy.environment(),
        working_dir=policy_mod.WORKSPACE,
        stdin_open=True,
        tty=False,
        network_disabled=run_policy.network_mode == "none",
        host_config=run_policy.host_config(api),
    )
    sock = _raw_socket(api.attach_socket(container_id, params=ATTACH_PARAMS))
    try:
        applied = policy_mod.read_applied(api.inspect_container(container_id))
        policy_mod.enforce(run_policy, applied)
        api.start(container_id)
    except BaseException:
        sock.close()
        raise
    started = time.monotonic()
    return RunningServer(container_id, sock, applied, round(started - began, 3), started)


def exit_code(session: SandboxSession, container_id: str) -> int | None:
    """The server's exit code if it has exited, else None."""
    state: dict[str, Any] = session.client.api.inspect_container(container_id).get("State") or {}
    return None if state.get("Running") else int(state.get("ExitCode", -1))


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
