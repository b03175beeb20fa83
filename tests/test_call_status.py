"""What a probe call's error says happened (call_send.failure_status): the client's own read timeout and closed
connection are a timeout and a crash; the same codes answered by the server (-32000 is the first implementation-defined
server error, which many servers use) are error answers. Each case runs through both clients the scan uses, the
scanner's own (sandboxed servers) and the SDK's (remote ones), over in-memory streams, so a change to what either
raises fails here, not in a scan."""

from __future__ import annotations

from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Any

import anyio
import mcp_types
import pytest
from mcp import Client
from mcp.shared.exceptions import MCPError
from mcp.shared.message import SessionMessage

from scanner.client.scan_client import ScanClient
from scanner.probes.call_send import send_call
from scanner.probes.model import ProbeCall, ProbeResult

CALL = ProbeCall(tool="echo", label="generated", arguments={}, kind="generated")
INIT = {"protocolVersion": "2025-11-25", "capabilities": {"tools": {}}, "serverInfo": {"name": "s", "version": "1"}}


CLIENTS = ["own", "sdk"]


def _call_against(answer_call: str, client_kind: str, timeout: float = 0.3) -> ProbeResult:
    """One send_call through a client ("own": ScanClient, "sdk": the SDK's Client) to a scripted server whose
    tools/call is `answer_call`: "close" (its stdout ends), "silent", or an error code to answer with at once
    ("-32000", "-32001")."""
    sdk = client_kind == "sdk"
    @asynccontextmanager
    async def transport() -> AsyncIterator[Any]:
        to_client, client_in = anyio.create_memory_object_stream[Any](16)
        client_out, to_server = anyio.create_memory_object_stream[Any](16)

        async def server() -> None:
            async for sent in to_server:
                message = sent.message if sdk else sent
                if not isinstance(message, mcp_types.JSONRPCRequest):
                    continue
                if message.method == "tools/call" and answer_call == "close":
                    await to_client.aclose()
                    return
                if message.method == "tools/call" and answer_call == "silent":
                    continue
                if message.method == "tools/call":
                    reply: dict[str, Any] = {"jsonrpc": "2.0", "id": message.id,
                                             "error": {"code": int(answer_call), "message": "Internal error"}}
                elif message.method == "initialize":
                    reply = {"jsonrpc": "2.0", "id": message.id, "result": INIT}
                else:
                    reply = {"jsonrpc": "2.0", "id": message.id, "error": {"code": -32601, "message": "nf"}}
                parsed = mcp_types.jsonrpc_message_adapter.validate_python(reply)
                await to_client.send(SessionMessage(parsed) if sdk else parsed)

        async with anyio.create_task_group() as tg:
            tg.start_soon(server)
            yield client_in, client_out
            tg.cancel_scope.cancel()

    async def run() -> ProbeResult:
        if sdk:
            async with Client(transport(), mode="auto", read_timeout_seconds=5, cache=None) as client:
                return (await send_call(client, CALL, timeout, answered=(MCPError,)))[0]
        info = mcp_types.Implementation(name="t", version="1")
        async with ScanClient(transport(), read_timeout=5, client_info=info) as own:
            return (await send_call(own, CALL, timeout))[0]

    return anyio.run(run)


@pytest.mark.parametrize("client_kind", CLIENTS)
def test_the_clients_closed_connection_is_a_crash(client_kind: str) -> None:
    result = _call_against("close", client_kind)
    assert (result.status, result.error_code) == ("crashed", None), result.error


@pytest.mark.parametrize("client_kind", CLIENTS)
def test_the_clients_read_timeout_is_a_timeout(client_kind: str) -> None:
    result = _call_against("silent", client_kind)
    assert (result.status, result.error_code) == ("timeout", None), result.error


@pytest.mark.parametrize("client_kind", CLIENTS)
def test_near_miss_a_server_answering_minus_32000_is_an_error_answer_not_a_crash(client_kind: str) -> None:
    result = _call_against("-32000", client_kind)
    assert (result.status, result.error_code) == ("protocol_error", -32000)
    assert result.error == "error -32000: Internal error"


@pytest.mark.parametrize("client_kind", CLIENTS)
def test_near_miss_a_server_answering_minus_32001_at_once_is_an_error_answer_not_a_timeout(client_kind: str) -> None:
    result = _call_against("-32001", client_kind, timeout=5.0)
    assert (result.status, result.error_code) == ("protocol_error", -32001)
