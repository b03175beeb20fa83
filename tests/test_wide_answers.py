"""Answers that hold millions of small values where MCP's models check them, from a hostile server: pydantic keeps an
error per value that fails, so one 8 MiB line could hold gigabytes and a minute of CPU in one validation. The reader
refuses such a line (the stream's fault, the scan incomplete) and still reads wide free JSON (schemas, `_meta`); an
output-schema check reads a bounded number of a result's errors. No Docker: the listing runs the real client over a
socketpair carrying Docker's attach frames."""

from __future__ import annotations

import json
import socket
import threading
import time
from typing import Any

import mcp_types
import pytest

from scanner.client.tool_schemas import ToolSchemas
from scanner.pipeline.wire_reader import MAX_TYPED_VALUES, Message, TooMany, read_line
from tests.attached_pair import collect_from, framed

INIT = {"protocolVersion": "2025-06-18", "serverInfo": {"name": "s", "version": "1"}, "capabilities": {"tools": {}}}


def _serve(sock: socket.socket, tools_answer: bytes) -> None:
    for line in sock.makefile("rb"):
        message = json.loads(line)
        method, request_id = message.get("method"), message.get("id")
        if method == "server/discover":
            reply = json.dumps({"jsonrpc": "2.0", "id": request_id,
                                "error": {"code": -32601, "message": "Method not found"}}).encode()
        elif method == "initialize":
            reply = json.dumps({"jsonrpc": "2.0", "id": request_id, "result": INIT}).encode()
        elif method == "tools/list":
            reply = b'{"jsonrpc":"2.0","id":%d,"result":%s}' % (request_id, tools_answer)
        else:
            continue
        sock.sendall(framed(reply + b"\n"))


def _listed(tools_answer: bytes) -> tuple[Any, float]:
    ours, theirs = socket.socketpair()
    threading.Thread(target=_serve, args=(theirs, tools_answer), daemon=True).start()
    began = time.monotonic()
    try:
        return collect_from(ours), time.monotonic() - began
    finally:
        theirs.close()


def test_a_tools_page_of_two_million_empty_tools_is_refused_at_once_and_said() -> None:
    # Before: the page's screen validated 2,000,000 tools one by one (about 15 s of CPU and 900 MB) and the listing
    # that followed rebuilt each error; now the line is refused before any model reads it.
    answer = b'{"tools":[' + b",".join([b"[]"] * 2_000_000) + b"]}"
    inventory, seconds = _listed(answer)
    assert inventory.tools == []
    assert inventory.errors == [f"listing tools: the server wrote a message ({len(answer) + 34} bytes) holding more "
                                f"than {MAX_TYPED_VALUES:,} JSON values outside schemas, structured content, "
                                f"_meta and data, the reader's bound"]
    assert seconds < 5


def test_a_call_result_of_millions_of_empty_contents_is_refused_without_validating() -> None:
    # Before: CallToolResult's content union kept five errors per item: 13.5 million errors, ~13 GB, ~60 s.
    line = b'{"jsonrpc":"2.0","id":4,"result":{"content":[' + b",".join([b"[]"] * 2_700_000) + b"]}}"
    assert isinstance(read_line(line), TooMany)


def test_wide_free_json_and_a_page_of_thousands_of_tools_are_still_read() -> None:
    wide_schema = {"type": "object", "properties": {"v": {"enum": list(range(300_000))}}}
    tools = [{"name": f"t{i}", "inputSchema": {"type": "object", "properties": {f"p{j}": {"type": "string"}
                                                                                for j in range(6)}},
              "annotations": {"readOnlyHint": True}} for i in range(10_000)]
    tools.append({"name": "wide", "inputSchema": wide_schema, "_meta": {"x": [[]] * 300_000}})
    log = {"jsonrpc": "2.0", "method": "notifications/message", "params": {"level": "info", "data": [{}] * 300_000}}
    assert isinstance(read_line(json.dumps(log).encode()), Message)
    line = json.dumps({"jsonrpc": "2.0", "id": 3, "result": {"tools": tools}}).encode()
    read = read_line(line, {3})
    assert isinstance(read, Message) and read.rejected_tools == ()
    assert len(read.message.result["tools"]) == 10_001


def test_structured_content_with_a_million_wrong_items_is_refused_in_bounded_time() -> None:
    # Before: best_match read every error jsonschema found (about 10 s of CPU a million) in the event loop, per call.
    schemas = ToolSchemas()
    output = {"type": "object", "properties": {"rows": {"type": "array", "items": {"type": "string"}}}}
    tool = mcp_types.Tool(name="rows", input_schema={"type": "object"}, output_schema=output)
    schemas.absorb(mcp_types.ListToolsResult(tools=[tool]), modern=False, complete=True)
    result = mcp_types.CallToolResult(content=[], structured_content={"rows": [0] * 1_000_000})
    began = time.monotonic()
    with pytest.raises(RuntimeError, match=r"^Invalid structured content returned by tool rows: 0 is not of type"):
        schemas.check("rows", result)
    assert time.monotonic() - began < 2
