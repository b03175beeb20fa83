"""A lone surrogate from the server (`"\\ud800"`: valid JSON, not valid Unicode) is data: the listing reads it as the
text of its escape, as every JSON the scanner reads, so the client's own answers and the stages after the listing
(the lint, the report) can write it. No Docker: the listing runs the real client over a socketpair carrying Docker's
attach frames."""

from __future__ import annotations

import json
import socket
import threading
from typing import Any

from scanner.pipeline.lint import lint
from scanner.pipeline.wire_reader import Message, has_lone_surrogate, read_line
from tests.attached_pair import collect_from, framed

INIT = {"protocolVersion": "2025-06-18", "serverInfo": {"name": "s", "version": "1"}, "capabilities": {"tools": {}}}
TOOLS = b'{"tools":[{"name":"e\\ud800cho","description":"Echoes \\udfff back.","inputSchema":{"type":"object"}}]}'


def _serve(sock: socket.socket, answers: list[Any]) -> None:
    for line in sock.makefile("rb"):
        message = json.loads(line)
        method, request_id = message.get("method"), message.get("id")
        if method is None:
            answers.append(message)  # the client's answer to the server's ping
            continue
        if method == "server/discover":
            replies = [json.dumps({"jsonrpc": "2.0", "id": request_id,
                                   "error": {"code": -32601, "message": "Method not found"}}).encode()]
        elif method == "initialize":
            replies = [json.dumps({"jsonrpc": "2.0", "id": request_id, "result": INIT}).encode()]
        elif method == "tools/list":
            replies = [b'{"jsonrpc":"2.0","id":"p\\ud800","method":"ping"}',
                       b'{"jsonrpc":"2.0","id":%d,"result":%s}' % (request_id, TOOLS)]
        else:
            continue
        sock.sendall(b"".join(framed(reply + b"\n") for reply in replies))


def test_a_lone_surrogate_in_a_request_id_and_a_tool_is_read_as_its_escape() -> None:
    # Before: the client's answer to the ping could not be written (PydanticSerializationError out of the transport)
    # and the listing's lint could not measure the tools (UnicodeEncodeError): the scan failed as an internal error.
    ours, theirs = socket.socketpair()
    answers: list[Any] = []
    server = threading.Thread(target=_serve, args=(theirs, answers), daemon=True)
    server.start()
    try:
        inventory = collect_from(ours)
        ours.close()  # the server reads to the end of what the client wrote (its answer to the ping among it)
        server.join(timeout=10)
    finally:
        theirs.close()
    assert inventory.errors == []
    assert [(tool["name"], tool["description"]) for tool in inventory.tools] == [("e\\ud800cho",
                                                                                  "Echoes \\udfff back.")]
    lint(inventory)
    assert answers == [{"jsonrpc": "2.0", "id": "p\\ud800", "result": {}}]


def test_a_surrogate_pair_is_the_character_it_encodes() -> None:
    read = read_line(b'{"jsonrpc":"2.0","id":1,"result":{"text":"\\ud83d\\ude00 \\ud800"}}')
    assert isinstance(read, Message) and read.message.result == {"text": "\U0001F600 \\ud800"}


def test_only_a_lone_surrogate_is_looked_for() -> None:
    found = [has_lone_surrogate(text) for text in (
        rb"\ud800", rb"x\udfff", rb"\ud83d x", rb"\ud83d\ude00\ude00", rb"\ud83d\ude00", rb"\uD83D\uDE00", rb"\u00e9",
        rb"\ud83d\ud83d\ude00", rb"\ud83d\ude00\ud83d\ude00", rb"\ud83d \ude00", rb"\ud83d\u0041")]
    assert found == [True, True, True, True, False, False, False, True, False, True, True]


def test_the_lone_surrogate_search_agrees_with_what_json_reads() -> None:
    """Over random escapes: a line holds a lone surrogate escape exactly when the text json reads from it does."""
    import json
    import random

    pieces = [rb"\ud83d", rb"\ude00", rb"\uD800", rb"\uDFFF", rb"\u0041", rb"x", rb" ", rb"\u00e9", rb"\udbff", rb"\udc00"]
    rng = random.Random(7)
    for _ in range(5_000):
        body = b"".join(rng.choice(pieces) for _ in range(rng.randint(0, 6)))
        text = json.loads(b'"' + body + b'"')
        lone = any(0xD800 <= ord(ch) <= 0xDFFF for ch in text)
        assert has_lone_surrogate(body) == lone, body
