"""The scanner's own MCP client (scanner/client) against a scripted server on in-memory streams: the handshake's
wire, pagination, what the server asks, error answers, timeouts and a closed connection. Pure logic, no Docker; the
live P10 tests (tests/test_cloaking_live.py) run it against a real sandboxed server."""

from __future__ import annotations

import subprocess
import sys
from collections.abc import Awaitable, Callable
from typing import Any

import anyio
import mcp_types
import pytest
from pydantic import ValidationError

from scanner.client.handshake import HandshakeClient, UnsupportedVersion
from scanner.client.session import ConnectionClosed, RpcError, RpcSession

IDENTITY = mcp_types.Implementation(name="cursor-vscode", version="1.0.0")
TOOL = {"name": "echo", "inputSchema": {"type": "object"}}
INIT_RESULT = {"protocolVersion": "2025-06-18", "capabilities": {"tools": {}},
               "serverInfo": {"name": "scripted", "version": "1"}, "instructions": "be kind"}

Script = Callable[[dict[str, Any]], Awaitable[list[dict[str, Any]]]]


def _answer(request: dict[str, Any], result: dict[str, Any]) -> dict[str, Any]:
    return {"jsonrpc": "2.0", "id": request["id"], "result": result}


async def _handshake_server(message: dict[str, Any]) -> list[dict[str, Any]]:
    """initialize answered; tools/list in two pages (the cursor "2" asks for the second)."""
    if message.get("method") == "initialize":
        return [_answer(message, INIT_RESULT)]
    if message.get("method") == "tools/list":
        cursor = (message.get("params") or {}).get("cursor")
        page = {"tools": [TOOL]} if cursor == "2" else {"tools": [{**TOOL, "name": "first"}], "nextCursor": "2"}
        return [_answer(message, page)]
    return []


async def _run(script: Script, body: Callable[[RpcSession], Awaitable[Any]]) -> tuple[Any, list[dict[str, Any]]]:
    """`body` run against `script` (each message the client sends -> the messages the server writes back); the
    result, and every message the client sent, as the wire saw them."""
    to_client, client_in = anyio.create_memory_object_stream[mcp_types.JSONRPCMessage | Exception](16)
    client_out, to_server = anyio.create_memory_object_stream[mcp_types.JSONRPCMessage](16)
    sent: list[dict[str, Any]] = []

    async def server() -> None:
        async with to_client:
            async for message in to_server:
                wire = message.model_dump(mode="json", by_alias=True, exclude_unset=True)
                sent.append(wire)
                for reply in await script(wire):
                    await to_client.send(mcp_types.jsonrpc_message_adapter.validate_python(reply))

    async with anyio.create_task_group() as tg:
        tg.start_soon(server)
        async with RpcSession(client_in, client_out) as session:
            result = await body(session)
        tg.cancel_scope.cancel()
    return result, sent


def test_the_handshake_then_every_page_of_tools_as_the_wire_shows_them() -> None:
    async def body(session: RpcSession) -> Any:
        client = HandshakeClient(session, read_timeout=5, client_info=IDENTITY)
        await client.initialize("2025-06-18")
        first = await client.list_tools()
        second = await client.list_tools(cursor=first.next_cursor)
        return client, [tool.name for tool in first.tools + second.tools]

    (client, names), sent = anyio.run(_run, _handshake_server, body)
    assert names == ["first", "echo"]
    assert client.protocol_version == "2025-06-18" and client.instructions == "be kind"
    assert [message.get("method") for message in sent] == [
        "initialize", "notifications/initialized", "tools/list", "tools/list"]
    assert sent[0]["params"] == {"protocolVersion": "2025-06-18", "capabilities": {},
                                 "clientInfo": {"name": "cursor-vscode", "version": "1.0.0"}}
    assert [message.get("id") for message in sent] == [0, None, 1, 2]
    assert "params" not in sent[1] and "params" not in sent[2]  # no member at all, never `"params": null`
    assert sent[3]["params"] == {"cursor": "2"}


def test_a_version_no_handshake_negotiates_is_refused_before_initialized_is_sent() -> None:
    async def modern(message: dict[str, Any]) -> list[dict[str, Any]]:
        return [_answer(message, {**INIT_RESULT, "protocolVersion": "2026-07-28"})]

    async def body(session: RpcSession) -> Any:
        with pytest.raises(UnsupportedVersion, match="2026-07-28"):
            await HandshakeClient(session, read_timeout=5, client_info=IDENTITY).initialize("2025-06-18")

    _, sent = anyio.run(_run, modern, body)
    assert [message.get("method") for message in sent] == ["initialize"]


def test_an_answer_that_is_not_a_listing_fails_validation() -> None:
    async def broken(message: dict[str, Any]) -> list[dict[str, Any]]:
        return [_answer(message, {"tools": "none"})]

    async def body(session: RpcSession) -> Any:
        with pytest.raises(ValidationError):
            await HandshakeClient(session, read_timeout=5, client_info=IDENTITY).list_tools()

    anyio.run(_run, broken, body)


def test_an_error_answer_raises_with_its_code_and_a_stray_answer_is_dropped() -> None:
    async def script(message: dict[str, Any]) -> list[dict[str, Any]]:
        if "id" not in message:
            return []
        stray = {"jsonrpc": "2.0", "id": 99, "result": {"made": "up"}}
        if message["method"] == "as_text":  # its id echoed as a string of digits: still its answer
            return [{"jsonrpc": "2.0", "id": str(message["id"]), "result": {"echoed": True}}]
        error = {"jsonrpc": "2.0", "id": message["id"], "error": {"code": -32603, "message": "boom"}}
        return [stray, error] if message["method"] == "fails" else [stray, _answer(message, {"ok": True})]

    async def body(session: RpcSession) -> Any:
        with pytest.raises(RpcError) as raised:
            await session.request("fails", None, 5)
        return raised.value.error.code, await session.request("works", None, 5), await session.request(
            "as_text", None, 5)

    (code, near_miss, echoed), _ = anyio.run(_run, script, body)
    assert code == -32603
    assert near_miss == {"ok": True}  # the answer to id 99 went to no request
    assert echoed == {"echoed": True}


def test_what_the_server_asks_is_answered_ping_alone_with_a_result() -> None:
    async def asking(message: dict[str, Any]) -> list[dict[str, Any]]:
        if message.get("method") != "go":
            return []
        return [{"jsonrpc": "2.0", "id": "p", "method": "ping"},
                {"jsonrpc": "2.0", "id": "s", "method": "sampling/createMessage", "params": {}},
                _answer(message, {})]

    async def body(session: RpcSession) -> Any:
        await session.request("go", None, 5)
        await anyio.sleep(0.05)  # the replies are written by their own tasks

    _, sent = anyio.run(_run, asking, body)
    replies = {message["id"]: message for message in sent if message.get("id") in ("p", "s")}
    assert replies["p"]["result"] == {}
    assert replies["s"]["error"]["code"] == mcp_types.METHOD_NOT_FOUND


def test_a_request_not_answered_in_time_times_out_and_the_server_is_told() -> None:
    async def silent(message: dict[str, Any]) -> list[dict[str, Any]]:
        return []

    async def body(session: RpcSession) -> Any:
        with pytest.raises(TimeoutError):
            await session.request("tools/list", None, 0.05)
        await anyio.sleep(0.02)

    _, sent = anyio.run(_run, silent, body)
    assert sent[-1] == {"jsonrpc": "2.0", "method": "notifications/cancelled",
                        "params": {"requestId": 0, "reason": "no answer within 0.05 s"}}


def test_a_closed_connection_fails_the_waiting_request_and_every_later_one() -> None:
    async def body() -> list[str]:
        to_client, client_in = anyio.create_memory_object_stream[mcp_types.JSONRPCMessage | Exception](4)
        client_out, to_server = anyio.create_memory_object_stream[mcp_types.JSONRPCMessage](4)
        failures: list[str] = []
        async with RpcSession(client_in, client_out) as session, to_server:
            async def close_soon() -> None:
                await anyio.sleep(0.05)
                await to_client.aclose()  # the server's stdout ended

            async with anyio.create_task_group() as tg:
                tg.start_soon(close_soon)
                for _ in range(2):
                    try:
                        await session.request("tools/list", None, 5)
                    except ConnectionClosed as exc:
                        failures.append(str(exc))
        return failures

    assert anyio.run(body) == ["the connection to the server closed"] * 2


def test_the_own_client_and_the_sandboxed_scan_path_import_no_mcp_sdk() -> None:
    """The sandboxed scan (listing, probes, P10's relisting, every stage after) runs on the scanner's own client: none
    of it imports the SDK (about 0.3 s of CPU a scan); only the remote path does."""
    probe = ("import sys, scanner.pipeline.relisting, scanner.client.handshake, scanner.client.scan_client, "
             "scanner.pipeline.scan, scanner.pipeline.image_scan, scanner.probes.phase, scanner.probes.runner; "
             "print(sorted(m for m in sys.modules if m == 'mcp' or m.startswith('mcp.')))")
    out = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, check=True).stdout
    assert out.strip() == "[]"
