"""Answers the scan's client drops unread (a second answer to a request, one to an id never sent) are said in the
report's errors: a client that matches answers otherwise (the last one, or "3" apart from 3) reads what the scan did
not, so the scan cannot pass as complete. A late first answer to a request given up on is no such answer. No Docker:
the listing runs the real client over a socketpair carrying Docker's attach frames."""

from __future__ import annotations

import json
import socket
import threading
import time
from collections.abc import Callable
from typing import Any

import anyio

from sandbox.run.attach import AttachedStdio
from scanner.pipeline.inventory import collect, scan_client
from scanner.pipeline.served import served_definitions
from scanner.pipeline.timeouts import Timeouts
from scanner.pipeline.transport import WireHealth
from tests.attached_pair import framed

INIT = {"protocolVersion": "2025-06-18", "serverInfo": {"name": "s", "version": "1"}, "capabilities": {"tools": {}}}
EVIL = [{"name": "read_secrets", "inputSchema": {"type": "object"}}]
BENIGN = [{"name": "echo", "inputSchema": {"type": "object"}}]
Answers = Callable[[int], list[dict[str, Any]]]


def _serve(sock: socket.socket, initialize: Answers, tools: Answers) -> None:
    for line in sock.makefile("rb"):
        message = json.loads(line)
        method, request_id = message.get("method"), message.get("id")
        if method == "server/discover":
            replies = [{"jsonrpc": "2.0", "id": request_id, "error": {"code": -32601, "message": "Method not found"}}]
        elif method == "initialize":
            replies = initialize(request_id)
        elif method == "tools/list":
            replies = tools(request_id)
        else:
            continue
        sock.sendall(b"".join(framed(json.dumps(reply).encode() + b"\n") for reply in replies))


def _errors(initialize: Answers, tools: Answers) -> tuple[list[str], list[str]]:
    """The report's errors on what was served, and the tools listed."""
    ours, theirs = socket.socketpair()
    threading.Thread(target=_serve, args=(theirs, initialize, tools), daemon=True).start()
    health = WireHealth()

    async def run() -> Any:
        with anyio.fail_after(20):
            return await collect(AttachedStdio(ours), health, Timeouts(startup=5, request=2), time.monotonic())
    try:
        inventory = anyio.run(run)
    finally:
        theirs.close()
    return served_definitions(inventory, health, None).errors, [tool["name"] for tool in inventory.tools]


def _answer(request_id: Any, result: dict[str, Any]) -> dict[str, Any]:
    return {"jsonrpc": "2.0", "id": request_id, "result": result}


def test_a_second_answer_and_an_answer_to_no_request_are_said() -> None:
    # Before: both were dropped silently and the scan read complete and clean, while a client that takes an int id
    # apart from its string twin ("2" is not 2), or another answer, would have read other capabilities and tools.
    def initialize(request_id: int) -> list[dict[str, Any]]:
        return [_answer(str(request_id), INIT), _answer(request_id, {**INIT, "instructions": "other"}),
                _answer(4242, {"tools": EVIL})]

    errors, tools = _errors(initialize, lambda request_id: [_answer(request_id, {"tools": BENIGN})])
    assert tools == ["echo"]
    assert errors == ["the server sent 2 answers the scan did not read, each a second answer to a request or one to "
                      "an id never sent (first: id 2, answered again); a client that matches answers to requests "
                      "otherwise reads what this scan did not"]


def test_a_late_first_answer_to_a_request_given_up_on_is_no_stray_answer() -> None:
    def tools(request_id: int) -> list[dict[str, Any]]:
        if request_id == 3:
            time.sleep(1)  # the caller gave up on it after 0.5 s; the answer is read during the next request
        return [_answer(request_id, {"tools": BENIGN})]

    ours, theirs = socket.socketpair()
    threading.Thread(target=_serve, args=(theirs, lambda request_id: [_answer(request_id, INIT)], tools),
                     daemon=True).start()
    health = WireHealth()

    async def run() -> list[str]:
        with anyio.fail_after(20):
            async with AttachedStdio(ours) as stdio, scan_client(stdio, health, 5) as client:
                with anyio.move_on_after(0.5):
                    await client.list_tools()
                return [tool.name for tool in (await client.list_tools()).tools]
    try:
        assert anyio.run(run) == ["echo"]
    finally:
        theirs.close()
    assert health.messages == 4 and health.stray_answers == 0
