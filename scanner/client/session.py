"""One JSON-RPC session over a client's message streams (scanner.pipeline.transport.attached_messages): each request
matched to its answer by id, notifications sent, what the server asks answered (by default `ping`, every other
method refused as a client that offers no capability does; the scan's client answers by protocol era), what it
notifies handed on, in the order received.

A request that is not answered (or cannot even be written) in time raises TimeoutError, after
`notifications/cancelled` tells the server (if it reads within CANCEL_SECONDS); an error answer raises RpcError; a
stream that ended, or a server whose stdin closed, raises ConnectionClosed for every request waiting and every later
one (with `sdk_codes`, the timeout and the closed connection are RpcError -32001 and -32000 instead, as the SDK's
client raises them). Nothing the server sends can raise here otherwise: an answer to no request is dropped, as the
SDK drops it. An exception from the notification handler (the scanner's own code) is not caught: it ends the
session."""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from types import TracebackType
from typing import Any

import anyio
import mcp_types
from anyio.abc import TaskGroup
from anyio.streams.memory import MemoryObjectReceiveStream, MemoryObjectSendStream

NotificationHandler = Callable[[str, dict[str, Any] | None], Awaitable[None]]
# What the client answers a request the server sends it (None: nothing is sent).
RequestAnswerer = Callable[[mcp_types.JSONRPCRequest], "mcp_types.JSONRPCMessage | None"]
_GONE = (anyio.BrokenResourceError, anyio.ClosedResourceError, anyio.EndOfStream, ConnectionError)
CANCEL_SECONDS = 5.0  # how long an abandoned request's cancel may wait for room to be written (the SDK's bound too)
NOTIFY_SECONDS = 30.0  # how long a notification may wait for room to be written


class RpcError(Exception):
    """The server answered a request with a JSON-RPC error."""

    def __init__(self, error: mcp_types.ErrorData) -> None:
        super().__init__(error.message)
        self.error = error


class ClientRpcError(RpcError):
    """With `sdk_codes`: the client's own timeout (-32001) or closed connection (-32000), raised as the SDK's client
    raises them (an RpcError) though the server answered nothing; `timeout`: how long the request waited at most."""

    def __init__(self, error: mcp_types.ErrorData, timeout: float) -> None:
        super().__init__(error)
        self.timeout = timeout


class ConnectionClosed(ConnectionError):
    """The connection to the server ended before the answer came."""


@dataclass
class _Waiting:
    """A request sent and not yet answered: its answer (result or error) once `answered` is set."""

    answered: anyio.Event = field(default_factory=anyio.Event)
    result: dict[str, Any] | None = None
    failure: Exception | None = None


def no_answer_within(timeout: float) -> str:
    return f"no answer within {timeout:g} s"


class RpcSession:
    """The session, its reader running while the session is entered (`async with`). Request ids count from
    `first_id`: 0 as the TypeScript SDK's clients (Cursor's among them) count, 1 as the Python SDK's. `answer`: what
    a request of the server's is answered with (by default ping answered, everything else refused); `cancel_reason`:
    the reason a timed-out request's cancel gives; `sdk_codes`: a request's own timeout and a closed connection raised
    as the Python SDK's client raises them, RpcError -32001 and -32000 (notifications onto a closed connection are
    then dropped, as it drops them)."""

    def __init__(self, receive: MemoryObjectReceiveStream[mcp_types.JSONRPCMessage | Exception],
                 send: MemoryObjectSendStream[mcp_types.JSONRPCMessage], *,
                 on_notification: NotificationHandler | None = None, first_id: int = 0,
                 answer: RequestAnswerer | None = None,
                 cancel_reason: Callable[[float], str] = no_answer_within, sdk_codes: bool = False) -> None:
        self._receive, self._send = receive, send
        self._sdk_codes = sdk_codes
        self._on_notification = on_notification
        self._answer_request = answer or ping_only
        self._cancel_reason = cancel_reason
        self._waiting: dict[int, _Waiting] = {}
        self._next_id = first_id
        self._closed: Exception | None = None
        self._tasks: TaskGroup | None = None

    async def __aenter__(self) -> RpcSession:
        self._tasks = anyio.create_task_group()
        await self._tasks.__aenter__()
        self._tasks.start_soon(self._read)
        return self

    async def __aexit__(self, exc_type: type[BaseException] | None, exc: BaseException | None,
                        traceback: TracebackType | None) -> bool | None:
        assert self._tasks is not None
        self._tasks.cancel_scope.cancel()
        return await self._tasks.__aexit__(exc_type, exc, traceback)

    async def request(self, method: str, params: dict[str, Any] | None, timeout: float, *,
                      cancel: bool = True) -> dict[str, Any]:
        """The result the server answered `method` with (RpcError, TimeoutError, ConnectionClosed: the module).
        `timeout` bounds the write as well as the wait: a server that stops reading its stdin cannot hold it.
        `cancel`: whether an abandoned request is cancelled (the negotiation's requests never are)."""
        if not self._sdk_codes:
            return await self._request(method, params, timeout, cancel)
        try:
            return await self._request(method, params, timeout, cancel)
        except TimeoutError:
            raise ClientRpcError(mcp_types.ErrorData(code=mcp_types.REQUEST_TIMEOUT,
                                                     message=f"Request {method!r} timed out"), timeout) from None
        except ConnectionClosed:
            raise ClientRpcError(mcp_types.ErrorData(code=mcp_types.CONNECTION_CLOSED, message="Connection closed"),
                                 timeout) from None

    async def _request(self, method: str, params: dict[str, Any] | None, timeout: float,
                       cancel: bool) -> dict[str, Any]:
        if self._closed is not None:
            raise ConnectionClosed(str(self._closed))
        request_id, waiting = self._next_id, _Waiting()
        self._next_id += 1
        self._waiting[request_id] = waiting
        try:
            with anyio.fail_after(timeout):
                await self._write(mcp_types.JSONRPCRequest(jsonrpc="2.0", id=request_id, method=method,
                                                           **_given(params)))
                await waiting.answered.wait()
        except TimeoutError:
            if cancel:
                await self._cancelled(request_id, self._cancel_reason(timeout))
            raise
        except anyio.get_cancelled_exc_class():  # the caller's own bound fired first (a listing page's)
            if cancel:
                with anyio.CancelScope(shield=True):
                    await self._cancelled(request_id, "caller cancelled")
            raise
        finally:
            self._waiting.pop(request_id, None)
        if waiting.failure is not None:
            raise waiting.failure
        return waiting.result or {}

    async def notify(self, method: str, params: dict[str, Any] | None = None, *,
                     timeout: float = NOTIFY_SECONDS) -> None:
        """Send a notification, waiting at most `timeout` for room to write it (TimeoutError past that)."""
        try:
            with anyio.fail_after(timeout):
                await self._write(mcp_types.JSONRPCNotification(jsonrpc="2.0", method=method, **_given(params)))
        except ConnectionClosed:
            if not self._sdk_codes:
                raise

    async def _write(self, message: mcp_types.JSONRPCMessage) -> None:
        try:
            await self._send.send(message)
        except _GONE as exc:
            raise ConnectionClosed(f"the server's stdin closed ({type(exc).__name__})") from None

    async def _cancelled(self, request_id: int, reason: str) -> None:
        """Tell the server a request is abandoned, if it reads within CANCEL_SECONDS; a server gone or not reading
        is not told."""
        with anyio.move_on_after(CANCEL_SECONDS):
            try:
                await self._write(mcp_types.JSONRPCNotification(
                    jsonrpc="2.0", method="notifications/cancelled", params={"requestId": request_id,
                                                                             "reason": reason}))
            except ConnectionClosed:
                pass

    async def _read(self) -> None:
        try:
            async for message in self._receive:
                if isinstance(message, Exception):
                    self._close(message)
                    return
                await self._take(message)
        except _GONE:
            pass
        self._close(ConnectionClosed("the connection to the server closed"))

    async def _take(self, message: mcp_types.JSONRPCMessage) -> None:
        if isinstance(message, mcp_types.JSONRPCResponse):
            self._answer(message.id, result=message.result)
        elif isinstance(message, mcp_types.JSONRPCError):
            self._answer(message.id, failure=RpcError(message.error))
        elif isinstance(message, mcp_types.JSONRPCRequest):
            self._reply(message)
        elif self._on_notification is not None:
            await self._on_notification(message.method, message.params)

    def _answer(self, request_id: Any, *, result: dict[str, Any] | None = None,
                failure: Exception | None = None) -> None:
        waiting = self._waiting.get(as_sent(request_id))
        if waiting is None or waiting.answered.is_set():
            return  # an answer to no request in flight (late, repeated, or made up): dropped
        waiting.result, waiting.failure = result, failure
        waiting.answered.set()

    def _reply(self, request: mcp_types.JSONRPCRequest) -> None:
        """The server's request answered (`answer`) in a task of its own, as the SDK's client answers: after what the
        reader has already woken (a handshake answer's `initialized` goes out first), at the version then settled."""
        assert self._tasks is not None
        self._tasks.start_soon(self._send_reply, request)

    async def _send_reply(self, request: mcp_types.JSONRPCRequest) -> None:
        """Put on the write buffer only if it has room: a server that asks without reading its stdin loses the
        replies, and the reader is never stalled by them."""
        reply = self._answer_request(request)
        if reply is None:
            return
        try:
            self._send.send_nowait(reply)
        except (anyio.WouldBlock, *_GONE):
            pass

    def _close(self, why: Exception) -> None:
        """The stream is over: every request waiting fails with `why`, and so does every later one."""
        self._closed = why
        failure = why if isinstance(why, ConnectionClosed) else ConnectionClosed(str(why))
        for waiting in self._waiting.values():
            if not waiting.answered.is_set():
                waiting.failure = failure
                waiting.answered.set()


def ping_only(request: mcp_types.JSONRPCRequest) -> mcp_types.JSONRPCMessage:
    """`ping` answered; every other request refused (a client that offers no roots, sampling or elicitation)."""
    if request.method == "ping":
        return mcp_types.JSONRPCResponse(jsonrpc="2.0", id=request.id, result={})
    error = mcp_types.ErrorData(code=mcp_types.METHOD_NOT_FOUND, message="Method not found")
    return mcp_types.JSONRPCError(jsonrpc="2.0", id=request.id, error=error)


def as_sent(answered_id: Any) -> int | None:
    """The id of the request an answer is for: the ids sent are integers, and a server that echoes one as a string is
    taken at its word wherever int() reads it ("12", " 12", "+12"), as the SDK's clients take it; anything else
    answers none."""
    if isinstance(answered_id, int) and not isinstance(answered_id, bool):
        return answered_id
    if isinstance(answered_id, str) and len(answered_id) <= 40:
        try:
            return int(answered_id)
        except ValueError:
            return None
    return None


def _given(params: dict[str, Any] | None) -> dict[str, Any]:
    """The params field only when there are params: a message without them has no `params` member (not null)."""
    return {} if params is None else {"params": params}
