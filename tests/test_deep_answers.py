"""Answers nested deeper than pydantic serializes (~250 levels) or jsonschema can check (~100 levels of schema) from a
hostile server: the listing, the server's capabilities and a call's result are kept, and an output-schema check that
cannot run is the client's refusal of the call (P11), never an internal error of the scan. No Docker: the listing
runs the real client over a socketpair carrying Docker's attach frames."""

from __future__ import annotations

import json
import socket
import threading
from typing import Any

import anyio
import mcp_types
import pytest

from scanner.client.tool_schemas import ToolSchemas
from scanner.probes.call_send import send_call
from scanner.probes.model import ProbeCall
from tests.attached_pair import collect_from, framed

CALL = ProbeCall(tool="echo", label="generated", arguments={}, kind="generated")


def _nested(depth: int, key: str = "a") -> Any:
    value: Any = {}
    for _ in range(depth):
        value = {key: value}
    return value


def _serve(sock: socket.socket, init: dict[str, Any], tools: dict[str, Any]) -> None:
    answers = {"initialize": init, "tools/list": tools}
    for line in sock.makefile("rb"):
        message = json.loads(line)
        method = message.get("method")
        if method == "server/discover":
            reply = {"jsonrpc": "2.0", "id": message["id"], "error": {"code": -32601, "message": "Method not found"}}
        elif method in answers:
            reply = {"jsonrpc": "2.0", "id": message["id"], "result": answers[method]}
        else:
            continue
        sock.sendall(framed(json.dumps(reply).encode() + b"\n"))


def test_capabilities_and_tools_nested_past_what_pydantic_serializes_are_listed() -> None:
    # Before: ServerCapabilities.model_dump raised "Maximum serialization depth exceeded" (ValueError) out of the
    # listing, and so did a tool whose `_meta` was that deep: the scan failed with an internal error.
    deep = _nested(300)
    init = {"protocolVersion": "2025-06-18", "serverInfo": {"name": "s", "version": "1"},
            "capabilities": {"tools": {}, "experimental": {"x": deep}}}
    tools = {"tools": [{"name": "echo", "inputSchema": {"type": "object"}, "_meta": {"x": deep}}]}
    ours, theirs = socket.socketpair()
    threading.Thread(target=_serve, args=(theirs, init, tools), daemon=True).start()
    try:
        inventory = collect_from(ours)
    finally:
        theirs.close()
    assert inventory.errors == []
    assert [tool["name"] for tool in inventory.tools] == ["echo"]
    assert inventory.tools[0]["_meta"] == {"x": deep} and inventory.tools[0]["inputSchema"] == {"type": "object"}
    assert inventory.server["capabilities"]["experimental"] == {"x": deep}
    assert "tools" in inventory.server["capabilities"]


class _Answering:
    """A client whose call_tool returns `result`, after the output-schema check a real client runs (`schemas`)."""

    def __init__(self, result: mcp_types.CallToolResult, output_schema: dict[str, Any] | None = None) -> None:
        self.result = result
        self.schemas = ToolSchemas()
        tool = mcp_types.Tool(name="echo", input_schema={"type": "object"}, output_schema=output_schema)
        self.schemas.absorb(mcp_types.ListToolsResult(tools=[tool]), modern=False, complete=True)

    async def call_tool(self, name: str, arguments: Any, read_timeout_seconds: float) -> mcp_types.CallToolResult:
        self.schemas.check(name, self.result)
        return self.result


def _sent(client: _Answering) -> Any:
    return anyio.run(send_call, client, CALL, 5.0)


def test_a_call_result_nested_past_what_pydantic_serializes_is_recorded() -> None:
    result = mcp_types.CallToolResult(content=[mcp_types.TextContent(type="text", text="hi", _meta={"x": _nested(300)})],
                                      _meta={"x": _nested(300)})
    probe, wire = _sent(_Answering(result))
    assert probe.status == "ok" and probe.response == "hi"
    assert wire is not None and wire["_meta"] == {"x": _nested(300)} and wire["content"][0]["text"] == "hi"


def test_structured_content_too_deep_to_write_out_again_is_recorded() -> None:
    probe, _ = _sent(_Answering(mcp_types.CallToolResult(content=[], structured_content=_nested(995))))
    assert probe.status == "ok" and "too deeply" in (probe.response or "")


def _schema(depth: int) -> dict[str, Any]:
    schema: dict[str, Any] = {"type": "object"}
    for _ in range(depth):
        schema = {"type": "object", "properties": {"a": schema}}
    return schema


@pytest.mark.parametrize(("output_schema", "structured"), [
    (_schema(200), {}),  # check_schema recursed past the limit
    ({"type": "object", "properties": {"a": {"$ref": "#"}}}, _nested(600)),  # a schema referring to itself
    ({"type": "object", "required": ["b"]}, {"a": _nested(900)}),  # the error's own text quoting the deep value
], ids=["deep-schema", "self-reference", "deep-instance-quoted"])
def test_an_output_schema_check_that_recurses_too_deep_is_the_clients_refusal(
        output_schema: dict[str, Any], structured: Any) -> None:
    # Before: RecursionError (a RuntimeError, but none of the SDK's refusals) was re-raised by send_call: the scan
    # failed with "internal error in probes".
    result = mcp_types.CallToolResult(content=[], structured_content=structured)
    probe, wire = _sent(_Answering(result, output_schema))
    assert probe.status == "protocol_error" and probe.refused and wire is None
    assert "echo" in (probe.error or "")
