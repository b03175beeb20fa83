"""What the report says ended a session of the scanner's own client: its own timeout and closed connection are
raised as the SDK raises them (RpcError -32001 / -32000), but they are not errors the server answered with, and the
report must not say the server answered. No Docker."""

from __future__ import annotations

import socket
from typing import Any

import anyio
import mcp_types

from scanner.client.session import RpcError, RpcSession
from scanner.pipeline.session_failures import error_answer, explain
from scanner.pipeline.transport import WireHealth
from tests.attached_pair import collect_from


def test_a_server_that_closes_stdout_at_once_is_not_said_to_have_answered() -> None:
    # Before: "connecting (initialize): the server answered with error -32000: Connection closed".
    ours, theirs = socket.socketpair()
    theirs.shutdown(socket.SHUT_WR)
    try:
        inventory = collect_from(ours)
    finally:
        theirs.close()
    assert inventory.errors == ["connecting (initialize): the connection to the server closed before it answered"]


async def _failure(answer: dict[str, Any] | None) -> RpcError:
    """The RpcError a sdk_codes session raises for one request: answered with `answer` (an error), or never."""
    to_client, client_in = anyio.create_memory_object_stream[mcp_types.JSONRPCMessage | Exception](4)
    client_out, to_server = anyio.create_memory_object_stream[mcp_types.JSONRPCMessage](4)

    async def server() -> None:
        async for message in to_server:
            if answer is not None and isinstance(message, mcp_types.JSONRPCRequest):
                await to_client.send(mcp_types.JSONRPCError(jsonrpc="2.0", id=message.id,
                                                            error=mcp_types.ErrorData(**answer)))

    failure: RpcError | None = None
    async with anyio.create_task_group() as tg:
        tg.start_soon(server)
        async with RpcSession(client_in, client_out, sdk_codes=True) as session:
            try:
                await session.request("tools/list", None, 0.2, cancel=False)
            except RpcError as exc:
                failure = exc
        tg.cancel_scope.cancel()
    assert failure is not None, "the request did not fail"
    return failure


def test_the_clients_own_timeout_reads_as_no_answer_and_a_servers_32001_as_its_answer() -> None:
    own = anyio.run(_failure, None)
    assert own.error.code == -32001 and error_answer(own) is None
    assert explain("listing tools", own, WireHealth(), 9) == "listing tools: the server did not answer within 0.2 s"
    answered = anyio.run(_failure, {"code": -32001, "message": "busy"})
    assert error_answer(answered) is not None
    assert explain("listing tools", answered, WireHealth(), 9) == \
        "listing tools: the server answered with error -32001: busy"
