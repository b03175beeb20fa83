"""The server's stdin/stdout/stderr through the Docker attach socket, as async line streams with hard limits.

With tty=False the engine multiplexes stdout and stderr on one socket in frames: a stream byte (1 stdout, 2 stderr),
three zero bytes, a big-endian 32-bit length, then the payload. Stdout is split into lines (one JSON-RPC message per
line for MCP stdio); a line longer than the limit ends the stream with a fault instead of growing without bound.
Stderr is kept as a size-capped tail (the run container has no engine log to read it back from).
"""

from __future__ import annotations

import socket
import struct
from dataclasses import dataclass, field

import anyio
from anyio.abc import SocketStream, TaskGroup
from anyio.streams.memory import MemoryObjectReceiveStream, MemoryObjectSendStream

STDOUT, STDERR = 1, 2
HEADER = struct.Struct(">BxxxI")
READ_CHUNK = 65_536


@dataclass(frozen=True)
class StreamLimits:
    max_line_bytes: int = 8 * 1024 * 1024
    stderr_tail_bytes: int = 64 * 1024


@dataclass(frozen=True)
class StreamFault:
    """Why stdout stopped being read: a line over the limit, or a malformed frame."""

    reason: str


@dataclass
class StderrTail:
    limit: int
    data: bytearray = field(default_factory=bytearray)
    total: int = 0

    def add(self, chunk: bytes) -> None:
        self.total += len(chunk)
        self.data.extend(chunk)
        if len(self.data) > self.limit:
            del self.data[: len(self.data) - self.limit]

    @property
    def truncated(self) -> bool:
        return self.total > len(self.data)


class AttachedStdio:
    """Async access to an attached container's stdio. Enter with `async with` inside an event loop."""

    def __init__(self, sock: socket.socket, limits: StreamLimits | None = None,
                 stderr: StderrTail | None = None) -> None:
        self._socket = sock
        self.limits = limits or StreamLimits()
        # The run container keeps no log (its log driver is `none`): this tail is the only copy of its stderr, so
        # the caller may pass the one its RunningServer holds, for crash evidence read after the attach closed.
        self.stderr = stderr if stderr is not None else StderrTail(self.limits.stderr_tail_bytes)
        self.stdout_bytes = 0
        self._stream: SocketStream | None = None
        self._task_group: TaskGroup | None = None
        self._lines_in: MemoryObjectSendStream[bytes | StreamFault]
        self.lines: MemoryObjectReceiveStream[bytes | StreamFault]
        self._lines_in, self.lines = anyio.create_memory_object_stream[bytes | StreamFault](64)

    async def __aenter__(self) -> AttachedStdio:
        self._stream = await SocketStream.from_socket(self._socket)
        self._task_group = anyio.create_task_group()
        await self._task_group.__aenter__()
        self._task_group.start_soon(self._pump)
        return self

    async def __aexit__(self, *exc: object) -> None:
        assert self._task_group is not None and self._stream is not None
        self._task_group.cancel_scope.cancel()
        await self._task_group.__aexit__(None, None, None)
        await self._stream.aclose()
        self.lines.close()

    async def send(self, data: bytes) -> None:
        assert self._stream is not None
        await self._stream.send(data)

    async def close_stdin(self) -> None:
        """Half-close: the server reads EOF on stdin."""
        assert self._stream is not None
        await self._stream.send_eof()

    async def _pump(self) -> None:
        assert self._stream is not None
        pending = bytearray()
        line = bytearray()
        async with self._lines_in:
            try:
                while True:
                    while len(pending) < HEADER.size:
                        chunk = await self._stream.receive(READ_CHUNK)
                        pending.extend(chunk)
                    kind, size = HEADER.unpack(pending[: HEADER.size])
                    del pending[: HEADER.size]
                    if kind not in (0, STDOUT, STDERR):
                        await self._lines_in.send(StreamFault(f"malformed attach frame (stream byte {kind})"))
                        return
                    remaining = size
                    while remaining:
                        if not pending:
                            pending.extend(await self._stream.receive(READ_CHUNK))
                        piece = bytes(pending[:remaining])
                        del pending[: len(piece)]
                        remaining -= len(piece)
                        if kind == STDERR:
                            self.stderr.add(piece)
                        elif not await self._feed_stdout(piece, line):
                            return
            except (anyio.EndOfStream, anyio.ClosedResourceError, anyio.BrokenResourceError, ConnectionError):
                if line:
                    await self._lines_in.send(bytes(line))

    async def _feed_stdout(self, piece: bytes, line: bytearray) -> bool:
        """Split stdout into lines; False when the server broke the line limit and reading must stop."""
        self.stdout_bytes += len(piece)
        start = 0
        while True:
            newline = piece.find(b"\n", start)
            if newline < 0:
                line.extend(piece[start:])
                break
            line.extend(piece[start:newline])
            await self._lines_in.send(bytes(line))
            line.clear()
            start = newline + 1
        if len(line) > self.limits.max_line_bytes:
            await self._lines_in.send(
                StreamFault(f"the server wrote a stdout line over {self.limits.max_line_bytes // (1024 * 1024)} MiB")
            )
            return False
        return True
