"""Streams into and out of a Docker exec: seeding a running sandbox (a tar into `tar -x` through an exec with
stdin, after the container started and before the server is asked to do anything: `tmpfs` mounts of a running
container cannot be written with `docker cp`/put_archive), and the helpers that write to and drain an exec's raw
socket without hanging on a container that died under it."""

from __future__ import annotations

import socket
import struct
import time
from typing import Any

import docker
from docker.errors import APIError, NotFound

from sandbox.run.policy import RUN_GID, RUN_UID
from sandbox.run.start_gate import then_open

EXEC_USER = f"{RUN_UID}:{RUN_GID}"
# Every look into the run container (observer, snapshot, namespace read, seeding) names its tool by a bare name, and an
# exec inherits the container's PATH: the server's, which puts /opt/server/node_modules/.bin and the venv's bin first,
# where a package installs bins of any name (`python3`, `sh`, `find`, `tar`). The looks search the image's system
# folders only, so a package's code never runs in their place (as the observer's own group, or forging its answers).
TOOLS_PATH = "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin"
EXEC_ENVIRONMENT = [f"PATH={TOOLS_PATH}"]
SEED_TIMEOUT = 60.0
EXEC_POLL_SECONDS = 0.25  # how often a silent exec is asked whether it still runs
FRAME = struct.Struct(">BxxxI")  # the engine's multiplexed stream: kind (0 stdin, 1 stdout, 2 stderr), size


class ObserveError(Exception):
    """A look into the sandbox failed (the container is gone, or the engine refused the exec)."""


def api_message(exc: Exception) -> str:
    explanation = getattr(exc, "explanation", None)
    return str(explanation or exc)[:300]


def extract_tar(client: docker.DockerClient, container_id: str, archive: bytes, dest: str,
                timeout: float = SEED_TIMEOUT, *, open_gate: bool = False) -> None:
    """Stream a tar into `tar -x -C dest` inside the running container, as the run uid (works on tmpfs mounts);
    `open_gate`: then open the server's start gate (sandbox/run/start_gate.py), whatever tar's status."""
    api = client.api
    command = ["tar", "-x", "-f", "-", "-C", dest, "--no-same-owner", "--delay-directory-restore"]
    command = then_open(command) if open_gate else command
    try:
        exec_id = api.exec_create(container_id, command, stdin=True, stdout=True, stderr=True, user=EXEC_USER,
                                  environment=EXEC_ENVIRONMENT)["Id"]
        attached = api.exec_start(exec_id, socket=True)
    except (APIError, NotFound) as exc:
        raise ObserveError(f"could not start tar in the sandbox: {api_message(exc)}") from exc
    raw: socket.socket = getattr(attached, "_sock", attached)
    output = bytearray()
    try:
        deadline = time.monotonic() + timeout
        _send_to_exec(api, exec_id, raw, archive, deadline)
        raw.shutdown(socket.SHUT_WR)
        _drain_exec(api, exec_id, raw, output, deadline)
    except OSError as exc:
        raise ObserveError(f"streaming the archive into {dest} failed: {exc}") from exc
    finally:
        raw.close()
    code = exec_exit_code(api, exec_id)
    if code != 0:
        raise ObserveError(f"tar -x into {dest} exited with {code}: {_demux_text(bytes(output))[:300]}")


def _send_to_exec(api: Any, exec_id: str, raw: socket.socket, data: bytes, deadline: float) -> None:
    """Write all of `data` to the exec's stdin. A container that died under it stops reading without closing the
    socket, so a write that does not go through is a cue to ask whether the exec still runs."""
    raw.settimeout(EXEC_POLL_SECONDS)
    view, sent = memoryview(data), 0
    while sent < len(view):
        try:
            sent += raw.send(view[sent:sent + 65_536])
        except TimeoutError:
            if not api.exec_inspect(exec_id).get("Running"):
                raise ObserveError("the container stopped reading (the server has exited)") from None
            if time.monotonic() > deadline:
                raise


def _drain_exec(api: Any, exec_id: str, raw: socket.socket, output: bytearray, deadline: float) -> None:
    """Read the exec's output to its end. When the container dies under it the engine may never close the socket,
    so between short reads the exec's state is asked: an exec that no longer runs has said all it will."""
    raw.settimeout(EXEC_POLL_SECONDS)
    while True:
        try:
            chunk = raw.recv(65_536)
        except TimeoutError:
            if not api.exec_inspect(exec_id).get("Running"):
                return
            if time.monotonic() > deadline:
                raise
            continue
        if not chunk:
            return
        if len(output) < 65_536:
            output.extend(chunk)


def exec_exit_code(api: Any, exec_id: str, wait: float = 5.0) -> int | None:
    deadline = time.monotonic() + wait
    while True:
        state = api.exec_inspect(exec_id)
        if not state.get("Running") or time.monotonic() > deadline:
            code = state.get("ExitCode")
            return None if code is None else int(code)
        time.sleep(0.02)


def frame_payloads(data: bytes, kinds: tuple[int, ...] = (0, 1, 2)) -> bytes:
    """The payloads of the engine's multiplexed frames of `kinds` (1 stdout, 2 stderr), joined; a stream that is not
    framed (a tty's) is the bytes themselves."""
    out = bytearray()
    view = memoryview(data)
    while len(view) >= FRAME.size:
        kind, size = FRAME.unpack(view[: FRAME.size])
        if kind not in (0, 1, 2):
            return data
        if kind in kinds:
            out.extend(view[FRAME.size: FRAME.size + size])
        view = view[FRAME.size + size:]
    return bytes(out)


def _demux_text(data: bytes) -> str:
    """The payloads of multiplexed exec output frames, as text (tolerates a raw stream too)."""
    return frame_payloads(data).decode("utf-8", errors="replace")
