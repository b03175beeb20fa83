"""A scripted server on the far end of a socketpair that carries Docker's multiplexed attach frames, read by the real
AttachedStdio: what the client- and probe-side tests drive without Docker."""

from __future__ import annotations

import socket
import struct
import threading
import time
from collections.abc import Callable
from typing import Any, BinaryIO

import anyio

from sandbox.run.attach import AttachedStdio
from scanner.pipeline.inventory import Inventory, collect
from scanner.pipeline.timeouts import Timeouts
from scanner.pipeline.transport import WireHealth

STDOUT_FRAME = struct.Struct(">BxxxI")  # Docker's attach framing: the stream (1: stdout), then the payload's length


def framed(data: bytes) -> bytes:
    """`data` as one stdout frame of the attach stream."""
    return STDOUT_FRAME.pack(1, len(data)) + data


def serve_in_thread(theirs: socket.socket, script: Callable[[BinaryIO, Callable[[bytes], None]], None]) -> None:
    """Run `script(stdin, out)` in a daemon thread on the server's end: it reads what the client sends from `stdin`
    and writes its stdout with `out` (framed); the client closing its end ends it."""
    def serve() -> None:
        try:
            script(theirs.makefile("rb"), lambda data: theirs.sendall(framed(data)))
        except OSError:
            pass

    threading.Thread(target=serve, daemon=True).start()


def collect_from(ours: socket.socket, startup: float = 5, request: float = 5) -> Inventory:
    """The scan's listing (`collect`) over the client's end of the pair, failing the test past 20 s."""
    async def run() -> Inventory:
        with anyio.fail_after(20):
            return await collect(AttachedStdio(ours), WireHealth(), Timeouts(startup=startup, request=request),
                                 time.monotonic())

    return anyio.run(run)


def timed_run(body: Callable[[], Any]) -> tuple[Any, float]:
    """`body()`'s value and the seconds it took."""
    began = time.monotonic()
    return body(), time.monotonic() - began
