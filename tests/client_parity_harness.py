"""One scripted stdio-like server driving both the MCP SDK's `Client(mode="auto", cache=None)` and the scan's own
`ScanClient` over in-memory streams (docs/own-client.md §7): what each client wrote, in order, as the scanner's
transport serializes it, and what each returned or raised, normalized so the two can be compared.

A script is `script(message, run) -> actions`: `message` is what the client just wrote (a dict, as on the wire),
`run.received` everything it wrote so far (this one last). Each action is a dict (a JSON-RPC message the server
writes, read back by the scanner's own line reader), CLOSE (the server's stdout ends), or `Sleep(seconds)`. No
action is silence."""

from __future__ import annotations

import json
import time
from collections.abc import AsyncIterator, Awaitable, Callable
from contextlib import asynccontextmanager
from dataclasses import dataclass, field
from typing import Any

import anyio
import mcp_types
from pydantic import BaseModel, ValidationError

from scanner.pipeline.wire_reader import Message, read_line

IDENTITY = mcp_types.Implementation(name="claude-ai", version="0.1.0")
MODERN = "2026-07-28"
CLOSE = "close"
LIMIT = 30.0  # a scenario still running after this long is recorded as hung
META = {"io.modelcontextprotocol/protocolVersion": MODERN,
        "io.modelcontextprotocol/clientInfo": {"name": "claude-ai", "version": "0.1.0"},
        "io.modelcontextprotocol/clientCapabilities": {}}
INIT_PARAMS = {"protocolVersion": "2025-11-25", "capabilities": {}, "clientInfo": {"name": "claude-ai",
                                                                                   "version": "0.1.0"}}
INIT_RESULT = {"protocolVersion": "2025-11-25", "capabilities": {"tools": {}, "prompts": {}, "x-vendor": {"a": 1}},
               "serverInfo": {"name": "scripted", "version": "1"}, "instructions": "be kind"}
DISCOVER_RESULT = {"supportedVersions": [MODERN], "capabilities": {"tools": {}}, "instructions": "modern",
                   "resultType": "complete", "ttlMs": 0, "cacheScope": "private",
                   "_meta": {"io.modelcontextprotocol/serverInfo": {"name": "modern", "version": "2"}}}


@dataclass
class Sleep:
    seconds: float


@dataclass
class Run:
    """One client's run: what it wrote (and when), what its message handler got, and the events a scenario noted."""

    name: str
    received: list[dict[str, Any]] = field(default_factory=list)
    times: list[float] = field(default_factory=list)
    events: list[Any] = field(default_factory=list)
    outcome: Any = None
    exc: BaseException | None = None  # the exception a session ended with, as raised
    began: float = field(default_factory=time.monotonic)

    def note(self, event: Any) -> None:
        self.events.append(event)

    def methods(self) -> list[str | None]:
        return [message.get("method") for message in self.received]


Script = Callable[[dict[str, Any], Run], list[Any]]
Scenario = Callable[[Any, Run], Awaitable[Any]]


# ---- building messages ------------------------------------------------------------------------------------------

def result(message: dict[str, Any], body: dict[str, Any]) -> dict[str, Any]:
    return {"jsonrpc": "2.0", "id": message["id"], "result": body}


def error(message: dict[str, Any], code: int, text: str, data: Any = None) -> dict[str, Any]:
    body: dict[str, Any] = {"code": code, "message": text}
    if data is not None:
        body["data"] = data
    return {"jsonrpc": "2.0", "id": message["id"], "error": body}


def notification(method: str, params: dict[str, Any] | None = None) -> dict[str, Any]:
    return {"jsonrpc": "2.0", "method": method, **({} if params is None else {"params": params})}


def request(request_id: Any, method: str, params: dict[str, Any] | None = None) -> dict[str, Any]:
    return {"jsonrpc": "2.0", "id": request_id, "method": method, **({} if params is None else {"params": params})}


def legacy(serve: Callable[[dict[str, Any], Run], list[Any]], init: dict[str, Any] | None = None) -> Script:
    """A handshake-era server: discover refused with -32601, `initialize` answered `init`, the rest by `serve`."""
    def script(message: dict[str, Any], run: Run) -> list[Any]:
        method = message.get("method")
        if method == "server/discover":
            return [error(message, -32601, "Method not found")]
        if method == "initialize":
            return [result(message, init or INIT_RESULT)]
        if method == "notifications/initialized":
            return []
        return serve(message, run)
    return script


def modern(serve: Callable[[dict[str, Any], Run], list[Any]], discover: dict[str, Any] | None = None) -> Script:
    """A 2026-07-28 server: discover answered `discover`, the rest by `serve`."""
    def script(message: dict[str, Any], run: Run) -> list[Any]:
        if message.get("method") == "server/discover":
            return [result(message, discover or DISCOVER_RESULT)]
        return serve(message, run)
    return script


def modern_list(tools: list[dict[str, Any]], **extra: Any) -> dict[str, Any]:
    return {"tools": tools, "ttlMs": 0, "cacheScope": "private", "resultType": "complete", **extra}


# ---- the two clients --------------------------------------------------------------------------------------------

def _wire(message: BaseModel) -> dict[str, Any]:
    """A message as the scanner's transport writes it (scanner/pipeline/transport.py: by alias, exclude_unset), so
    an explicit null the server would see (`"data": null`) counts; a model_dump with exclude_none would hide it."""
    return json.loads(message.model_dump_json(by_alias=True, exclude_unset=True))


@asynccontextmanager
async def _served(script: Script, run: Run, wrap: Callable[[Any], Any],
                  unwrap: Callable[[Any], BaseModel]) -> AsyncIterator[tuple[Any, Any]]:
    """The client's end of a connection to `script`; what the client wrote is recorded in `run`, up to the last
    message still buffered when the client lets go of the transport."""
    to_client, client_in = anyio.create_memory_object_stream[Any](100)
    client_out, to_server = anyio.create_memory_object_stream[Any](100)
    state = {"open": True}

    def record(sent: Any) -> dict[str, Any]:
        wire = _wire(unwrap(sent))
        run.received.append(wire)
        run.times.append(time.monotonic() - run.began)
        return wire

    async def act(action: Any) -> None:
        if action == CLOSE:
            state["open"] = False
            await to_client.aclose()
        elif isinstance(action, Sleep):
            await anyio.sleep(action.seconds)
        elif state["open"]:
            read = read_line(json.dumps(action).encode(), ())
            assert isinstance(read, Message), f"the script wrote no JSON-RPC message: {action}"
            await to_client.send(wrap(read.message))

    async def serve() -> None:
        async for sent in to_server:
            wire = record(sent)
            for action in script(wire, run) if state["open"] else []:
                await act(action)

    try:
        async with anyio.create_task_group() as tg:
            tg.start_soon(serve)
            try:
                yield client_in, client_out
            finally:
                tg.cancel_scope.cancel()
    finally:
        _drain(to_server, record)
        to_client.close()
        to_server.close()


def _drain(stream: Any, record: Callable[[Any], Any]) -> None:
    """What the client wrote on its way out (a cancel) and the server had not read yet."""
    try:
        while True:
            record(stream.receive_nowait())
    except (anyio.WouldBlock, anyio.EndOfStream, anyio.ClosedResourceError):
        pass


def _sdk_client(script: Script, run: Run, read_timeout: float, handler: Any) -> Any:
    from mcp import Client
    from mcp.shared.message import SessionMessage

    transport = _served(script, run, SessionMessage, lambda sent: sent.message)
    return Client(transport, mode="auto", read_timeout_seconds=read_timeout, client_info=IDENTITY, cache=None,
                  message_handler=handler)


def _own_client(script: Script, run: Run, read_timeout: float, handler: Any) -> Any:
    from scanner.client.scan_client import ScanClient

    transport = _served(script, run, lambda message: message, lambda message: message)
    return ScanClient(transport, read_timeout=read_timeout, client_info=IDENTITY, message_handler=handler)


# ---- outcomes ---------------------------------------------------------------------------------------------------

def dumped(value: Any) -> Any:
    """Models dumped as the report dumps them; lists, tuples and dicts of them likewise."""
    if isinstance(value, BaseModel):
        return value.model_dump(mode="json", by_alias=True, exclude_none=True)
    if isinstance(value, (list, tuple)):
        return [dumped(item) for item in value]
    if isinstance(value, dict):
        return {key: dumped(item) for key, item in value.items()}
    return value


def _leaf(exc: BaseException) -> BaseException:
    while isinstance(exc, BaseExceptionGroup):
        exc = exc.exceptions[0]
    return exc


def raised(exc: BaseException) -> tuple[Any, ...]:
    """An exception as both clients must agree on it: an RPC error (the SDK's MCPError, the own client's RpcError, or
    its ClientRpcError for its own timeout and closed connection) by code, message and data; a RuntimeError by its
    message; a ValidationError and the rest by class name."""
    exc = _leaf(exc)
    error_data = getattr(exc, "error", None)
    if isinstance(error_data, mcp_types.ErrorData) and type(exc).__name__ in ("MCPError", "RpcError", "ClientRpcError"):
        return ("rpc", error_data.code, error_data.message, error_data.data)
    if isinstance(exc, ValidationError):
        return ("ValidationError",)
    if isinstance(exc, RuntimeError):
        return ("RuntimeError", str(exc))
    return (type(exc).__name__, str(exc))


def notified(run: Run) -> Callable[[Any], Awaitable[None]]:
    async def handler(message: Any) -> None:
        if isinstance(message, Exception):
            run.note(("exception", type(message).__name__))
            return
        params = getattr(message, "params", None)
        try:
            run.note(("notified", message.method, dumped(params) if params is not None else None))
        except ValueError:  # nested deeper than pydantic serializes (the scan's own log falls back the same way)
            run.note(("notified", message.method, "too deep to dump"))
    return handler


async def _run_one(make: Callable[..., Any], script: Script, scenario: Scenario, run: Run, read_timeout: float,
                   sessions: int) -> None:
    outcomes = []
    for _ in range(sessions):  # a restart: a new client on a new connection to the same server
        with anyio.move_on_after(LIMIT) as scope:
            try:
                async with make(script, run, read_timeout, notified(run)) as client:
                    outcome: Any = ("returned", dumped(await scenario(client, run)))
            except Exception as exc:  # noqa: BLE001 - the outcome under test
                run.exc = _leaf(exc)
                outcome = ("raised", *raised(exc))
        outcomes.append(("hung",) if scope.cancelled_caught else outcome)
    run.outcome = outcomes[0] if sessions == 1 else outcomes


def both(script: Script, scenario: Scenario, read_timeout: float = 1.0, sessions: int = 1) -> tuple[Run, Run]:
    """`scenario(client, run)` run against `script` by the SDK's client and by ScanClient at once (`sessions`
    times each, one after another); their runs."""
    sdk, own = Run("sdk"), Run("own")

    async def main() -> None:
        async with anyio.create_task_group() as tg:
            tg.start_soon(_run_one, _sdk_client, script, scenario, sdk, read_timeout, sessions)
            tg.start_soon(_run_one, _own_client, script, scenario, own, read_timeout, sessions)

    anyio.run(main)
    return sdk, own


def same(script: Script, scenario: Scenario, read_timeout: float = 1.0, sessions: int = 1) -> Run:
    """Both clients wrote the same messages in the same order and ended the same way; the SDK's run."""
    sdk, own = both(script, scenario, read_timeout, sessions)
    assert_same(sdk, own)
    return sdk


def assert_same(sdk: Run, own: Run) -> None:
    for index, (theirs, ours) in enumerate(zip(sdk.received, own.received)):
        assert theirs == ours, f"message {index} differs:\n  sdk: {theirs}\n  own: {ours}"
        assert json.dumps(theirs) == json.dumps(ours), f"message {index}'s keys are in another order:\n  sdk: " \
            f"{json.dumps(theirs)}\n  own: {json.dumps(ours)}"
    assert len(sdk.received) == len(own.received), (
        f"sdk wrote {len(sdk.received)} messages, own {len(own.received)}:\n"
        f"  sdk: {sdk.received[len(own.received):]}\n  own: {own.received[len(sdk.received):]}")
    assert sdk.outcome == own.outcome, f"outcomes differ:\n  sdk: {sdk.outcome}\n  own: {own.outcome}"
    assert sdk.events == own.events, f"events differ:\n  sdk: {sdk.events}\n  own: {own.events}"


def properties(client: Any) -> dict[str, Any]:
    return {"protocol_version": client.protocol_version, "server_info": dumped(client.server_info),
            "server_capabilities": dumped(client.server_capabilities), "instructions": client.instructions}
