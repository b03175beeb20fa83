"""P10's second session (relisting.list_as) over a real attach stream (a socketpair carrying Docker's multiplexed
frames, read by the real AttachedStdio and transport) against scripted servers: what the SDK accepted is accepted,
what it refused is a recorded problem, and no server can hold the session past its timeouts. No Docker."""

from __future__ import annotations

import json
import socket
from collections.abc import Callable, Iterator
from typing import Any, BinaryIO

import anyio

from sandbox.run.attach import AttachedStdio
from scanner.pipeline.client_identity import ALTERNATE
from scanner.pipeline.relisting import Relisting, list_as
from scanner.pipeline.timeouts import Timeouts
from tests.attached_pair import serve_in_thread, timed_run

INIT = {"protocolVersion": "2025-06-18", "capabilities": {"tools": {}}, "serverInfo": {"name": "s", "version": "1"}}
TOOL = {"name": "echo", "inputSchema": {"type": "object"}}
Script = Callable[[BinaryIO, Callable[[dict[str, Any]], None]], None]


def _messages(stdin: BinaryIO) -> Iterator[dict[str, Any]]:
    for line in stdin:
        yield json.loads(line)


def _listed(script: Script, timeouts: Timeouts = Timeouts(startup=1, request=1)) -> tuple[Relisting | None, float]:
    """list_as against `script` (reading the client's lines, writing with `out`); its Relisting, or None when it
    was still running 10 s later, and the seconds it took."""
    ours, theirs = socket.socketpair()
    serve_in_thread(theirs, lambda stdin, out: script(stdin, lambda message: out((json.dumps(message) + "\n").encode())))

    async def run() -> Relisting | None:
        with anyio.move_on_after(10):
            return await list_as(AttachedStdio(ours), ALTERNATE, timeouts)
        return None

    try:
        return timed_run(lambda: anyio.run(run))
    finally:
        theirs.close()


def _answering(tools_result: dict[str, Any], init: dict[str, Any] = INIT) -> Script:
    def script(stdin: BinaryIO, out: Callable[[dict[str, Any]], None]) -> None:
        for message in _messages(stdin):
            if message.get("method") == "initialize":
                out({"jsonrpc": "2.0", "id": message["id"], "result": init})
            elif message.get("method") == "tools/list":
                out({"jsonrpc": "2.0", "id": message["id"], "result": tools_result})
    return script


def test_the_second_listing_reads_the_tools_and_the_version() -> None:
    listed, _ = _listed(_answering({"tools": [TOOL]}))
    assert listed is not None and listed.problem is None
    assert [tool["name"] for tool in listed.tools] == ["echo"] and listed.protocol_version == "2025-06-18"


def test_a_later_revisions_fields_on_a_handshake_era_page_are_ignored_as_the_sdk_ignores_them() -> None:
    listed, _ = _listed(_answering({"tools": [TOOL], "ttlMs": -5, "cacheScope": "bogus", "resultType": "weird"}))
    assert listed is not None and listed.problem is None and [tool["name"] for tool in listed.tools] == ["echo"]


def test_a_version_no_handshake_negotiates_is_the_problem_not_a_failed_scan() -> None:
    listed, _ = _listed(_answering({"tools": [TOOL]}, init={**INIT, "protocolVersion": "2026-07-28"}))
    assert listed is not None and listed.tools == []
    assert listed.problem == ("connecting (initialize at 2025-06-18): the server answered with protocol version "
                              "'2026-07-28', which no initialize handshake negotiates")


def test_an_answer_that_is_not_an_initialize_result_is_the_problem() -> None:
    listed, _ = _listed(_answering({"tools": [TOOL]}, init={"x": 1}))
    assert listed is not None and listed.problem is not None
    assert listed.problem.startswith("connecting (initialize at 2025-06-18): the answer does not match the MCP schema")


def test_a_page_not_answered_is_the_problem_with_the_pages_own_timeout() -> None:
    listed, _ = _listed(_silent_on_lists, Timeouts(startup=3, request=0.5))
    assert listed is not None and listed.problem == "listing tools: the server did not answer within 0.5 s"


def _silent_on_lists(stdin: BinaryIO, out: Callable[[dict[str, Any]], None]) -> None:
    for message in _messages(stdin):
        if message.get("method") == "initialize":
            out({"jsonrpc": "2.0", "id": message["id"], "result": INIT})


def _asking_without_reading(stdin: BinaryIO, out: Callable[[dict[str, Any]], None]) -> None:
    """Never reads its stdin; asks the client for ping after ping, so every reply piles up unread."""
    for number in range(200_000):
        out({"jsonrpc": "2.0", "id": number, "method": "ping"})


def test_a_server_that_asks_and_never_reads_cannot_hold_the_session() -> None:
    listed, _ = _listed(_asking_without_reading)  # at most the startup timeout, then the cancel's 5 s bound
    assert listed is not None, "the session was still running 10 s later"
    assert listed.problem is not None and listed.problem.startswith("connecting (initialize at 2025-06-18):")


def _answering_twice(second_tools: list[dict[str, Any]]) -> Script:
    """Answers the first tools/list page with TOOL and a cursor, then again (the same id) with `second_tools`; the
    next page is empty. The second answer comes before the client's next request is answered, so it is read while the
    session is open however the threads are scheduled (a second answer to the last page could arrive after the client
    had closed: a test of that raced)."""
    def script(stdin: BinaryIO, out: Callable[[dict[str, Any]], None]) -> None:
        for message in _messages(stdin):
            if message.get("method") == "initialize":
                out({"jsonrpc": "2.0", "id": message["id"], "result": INIT})
            elif message.get("method") == "tools/list" and not (message.get("params") or {}).get("cursor"):
                out({"jsonrpc": "2.0", "id": message["id"], "result": {"tools": [TOOL], "nextCursor": "2"}})
                out({"jsonrpc": "2.0", "id": message["id"], "result": {"tools": second_tools}})
            elif message.get("method") == "tools/list":
                out({"jsonrpc": "2.0", "id": message["id"], "result": {"tools": []}})
    return script


def test_a_second_answer_to_the_second_listing_is_said_beside_the_comparison() -> None:
    # Before: the second session's WireHealth was dropped, so a second answer to its tools/list (which a client that
    # keeps the last answer reads: here a tool only it sees) left P10 compared and the scan complete.
    hidden = {"name": "sync_notes", "inputSchema": {"type": "object"}}
    listed, _ = _listed(_answering_twice([TOOL, hidden]))
    assert listed is not None and listed.problem is None and [tool["name"] for tool in listed.tools] == ["echo"]
    assert listed.errors([]) == [
        f"the second listing (as {ALTERNATE.client}): the server sent 1 answers the scan did not read, each a second "
        "answer to a request or one to an id never sent (first: id 1, answered again); a client that matches answers "
        "to requests otherwise reads what this scan did not"]


def test_a_tool_the_schema_rejects_only_in_the_second_listing_is_said() -> None:
    # Before: the transport took it off the second listing's page and P10 compared the rest: a tool served to one
    # client alone, in a form the MCP SDK rejects (one a more lenient client may take), went unsaid.
    listed, _ = _listed(_answering({"tools": [TOOL, {"name": "sync_notes"}]}))
    assert listed is not None and listed.problem is None and [tool["name"] for tool in listed.tools] == ["echo"]
    assert listed.rejected == ({"name": "sync_notes"},)
    assert listed.errors([{"name": "sync_notes"}]) == []  # the first listing served it too (linted there)
    two, _ = _listed(_answering({"tools": [{"name": "a"}, TOOL, {"name": "b"}]}))
    assert two is not None and two.errors([{"name": "b"}, {"name": "a"}]) == []  # in another order: the same
    assert listed.errors([]) == [
        f"the second listing (as {ALTERNATE.client}) served 1 tools the MCP schema rejects, the first 0, not the "
        "same: P10 compares only the tools the schema accepts, so a tool served to one client alone in a form it "
        "rejects goes uncompared"]
