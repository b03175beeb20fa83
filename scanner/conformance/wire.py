"""Raw JSON-RPC over a server's attached stdio, for the conformance probe: requests the SDK would never send (no
initialize before them, a bogus protocol version, ping on a 2026-07-28 request), each answer kept as served.

Every line the server writes is read by one task: an answer to a request in flight wakes it; a message with a
method is something the server sent unasked (a notification, or a request, answered at once with -32601 so the
server never waits on the scanner). Every line the probe sends is written by one task of its own, from a bounded
queue: a request's timeout bounds its wait for room there as well as for the answer, and a reply that finds no room
is dropped, so a server that floods requests, or stops reading its stdin, can neither stall the reader nor hold the
probe past its timeouts. The wire log keeps one capped line per message, both ways (bounded). Lines that are not
JSON-RPC and answers to no request in flight (a second answer, one to an id never sent) are counted in `health`, as
the scan's own transport counts them (scanner.pipeline.transport.WireHealth), for the report's errors; the first
answer to a request is the one read."""

from __future__ import annotations

import json
import time
from contextlib import suppress
from dataclasses import dataclass, field
from typing import Any

import anyio

from sandbox.run.attach import AttachedStdio, StreamFault
from scanner.conformance.model import Answer
from scanner.conformance.wording import answer_text, exchange_line
from scanner.pipeline.transport import WireHealth

MAX_LOG_LINES = 200
MAX_UNASKED = 200
OUTBOX_LINES = 16  # lines queued for the writer; a reply past them is dropped
NOTIFY_SECONDS = 10.0  # how long a notification may wait for room in the queue
NO_CLIENT_FEATURES = "the scanner's conformance probe offers no client features"


@dataclass
class _Pending:
    done: anyio.Event = field(default_factory=anyio.Event)
    message: dict[str, Any] | None = None


class RawWire:
    """Enter with `async with` over an entered AttachedStdio; `request` sends one request and waits for its answer."""

    def __init__(self, stdio: AttachedStdio) -> None:
        self.stdio = stdio
        self.log: list[str] = []
        self.unasked: list[str] = []
        self.closed = False
        self.health = WireHealth()  # noise and stray answers (its flood `fault` ends nothing here)
        self._pending: dict[int, _Pending] = {}
        self._gave_up: dict[int, tuple[str, float]] = {}  # a request that timed out: its method, when it was sent
        self.late: dict[int, Answer] = {}  # the first answer to each of those that came after all (by request id)
        self._next_id = 1
        self._outbox_in, self._outbox = anyio.create_memory_object_stream[bytes](OUTBOX_LINES)

    async def __aenter__(self) -> RawWire:
        self._group = anyio.create_task_group()
        await self._group.__aenter__()
        self._group.start_soon(self._read)
        self._group.start_soon(self._write_out)
        return self

    async def __aexit__(self, *exc: object) -> None:
        self._group.cancel_scope.cancel()
        await self._group.__aexit__(None, None, None)
        self._outbox_in.close()
        self._outbox.close()

    async def request(self, method: str, params: dict[str, Any], timeout: float) -> Answer:
        began = time.monotonic()
        if self.closed:
            return Answer(method, closed=True)
        request_id, self._next_id = self._next_id, self._next_id + 1
        pending = self._pending[request_id] = _Pending()
        with anyio.move_on_after(timeout):
            await self._write({"jsonrpc": "2.0", "id": request_id, "method": method, "params": params})
            await pending.done.wait()
        self._pending.pop(request_id, None)
        seconds = round(time.monotonic() - began, 3)
        message = pending.message
        if message is None:
            answer = Answer(method, closed=self.closed, timed_out=not self.closed, seconds=round(timeout, 3),
                            request_id=request_id)
            self._note("<-", f"#{request_id} {answer_text(answer)}")
            if answer.timed_out and len(self._gave_up) < MAX_UNASKED:
                self._gave_up[request_id] = (method, began)
            return answer
        return _answer(method, message, seconds, request_id)

    async def notify(self, method: str, params: dict[str, Any] | None = None) -> None:
        """Queue a notification, waiting at most NOTIFY_SECONDS for room (past that it is not sent)."""
        with anyio.move_on_after(NOTIFY_SECONDS):
            await self._write({"jsonrpc": "2.0", "method": method, **({"params": params} if params else {})})

    async def quiet(self, seconds: float) -> None:
        """Wait, reading what the server sends unasked, for `seconds` (or until it closes stdout)."""
        with anyio.move_on_after(seconds):
            while not self.closed:
                await anyio.sleep(0.05)

    async def _write(self, message: dict[str, Any]) -> None:
        """Queue one line for the writer, waiting for room (the caller bounds the wait)."""
        if not self.closed:
            await self._outbox_in.send(self._line(message))

    def _reply(self, message: dict[str, Any]) -> None:
        """Queue a reply only if there is room: a server that asks faster than it reads loses the replies."""
        if not self.closed:
            with suppress(anyio.WouldBlock):
                self._outbox_in.send_nowait(self._line(message))

    def _line(self, message: dict[str, Any]) -> bytes:
        data = json.dumps(message, separators=(",", ":"))
        self._note("->", data)
        return data.encode() + b"\n"

    async def _write_out(self) -> None:
        """The one task that writes to the server's stdin (two writers at once would be refused by the stream)."""
        async for data in self._outbox:
            try:
                await self.stdio.send(data)
            except (anyio.BrokenResourceError, anyio.ClosedResourceError, ConnectionError):
                self._close()
                return

    async def _read(self) -> None:
        async for item in self.stdio.lines:
            if isinstance(item, StreamFault):
                self._note("<-", f"(the stream ended: {item.reason})")
                break
            if item.strip():
                await self._receive(item)
        self._close()

    async def _receive(self, line: bytes) -> None:
        try:
            message = json.loads(line)
        except (ValueError, RecursionError):
            message = None
        if not isinstance(message, dict):
            self.health.note_noise(line)
            return
        self._note("<-", line.decode("utf-8", errors="replace"))
        method = message.get("method")
        if isinstance(method, str):
            if len(self.unasked) < MAX_UNASKED:
                self.unasked.append(method[:200])
            if "id" in message:  # a request: answered at once, so the server never waits on the probe
                self._reply({"jsonrpc": "2.0", "id": message["id"],
                             "error": {"code": -32601, "message": NO_CLIENT_FEATURES}})
            return
        if "result" not in message and "error" not in message:
            return
        request_id = message.get("id") if _is_id(message.get("id")) else None
        pending = self._pending.get(request_id) if request_id is not None else None
        if pending is not None and pending.message is None:
            pending.message = message
            pending.done.set()
        elif request_id in self._gave_up and request_id not in self.late:  # an answer after the probe moved on
            method, began = self._gave_up[request_id]
            self.late[request_id] = _answer(method, message, round(time.monotonic() - began, 3), request_id)
        elif message.get("id") is not None:  # a null id answers a request the server could not read: no stray
            sent = request_id is not None and request_id < self._next_id
            self.health.note_stray(message.get("id"), "answered again" if sent else "never sent")

    def _close(self) -> None:
        self.closed = True
        for pending in self._pending.values():
            pending.done.set()

    def _note(self, arrow: str, text: str) -> None:
        if len(self.log) < MAX_LOG_LINES:
            self.log.append(exchange_line(arrow, text))


def _answer(method: str, message: dict[str, Any], seconds: float, request_id: int) -> Answer:
    error = message.get("error")
    return Answer(method, result=message.get("result"), seconds=seconds, request_id=request_id,
                  error=error if isinstance(error, dict) else ({"message": "not an object"} if error else None))


def _is_id(value: Any) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)
