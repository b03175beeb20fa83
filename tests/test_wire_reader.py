"""The tolerant wire reader and the bounded engine client, without Docker."""

from __future__ import annotations

import json
import socket
import threading

import mcp_types
import pytest

from sandbox.core.engine import BoundedAPIClient, EngineTimeout, describe_call
from scanner.pipeline.wire_reader import Message, Noise, TooDeep, read_line


def _nested(levels: int) -> dict:
    schema: dict = {"type": "string"}
    for _ in range(levels):
        schema = {"type": "object", "properties": {"child": schema}}
    return schema


def _tools_list(schema: dict) -> bytes:
    return json.dumps({"jsonrpc": "2.0", "id": 1, "result": {"tools": [
        {"name": "deep", "inputSchema": {"type": "object", "properties": {"tree": schema}}}]}}).encode()


def test_a_message_nested_100_levels_is_a_message_though_the_sdk_parser_refuses_it():
    line = _tools_list(_nested(100))
    with pytest.raises(ValueError, match="recursion limit"):
        mcp_types.jsonrpc_message_adapter.validate_json(line, by_name=False)
    read = read_line(line)
    assert isinstance(read, Message)
    assert isinstance(read.message, mcp_types.JSONRPCResponse)


def test_noise_and_wrong_shapes_are_noise_and_absurd_depth_is_refused_cleanly():
    assert read_line(b"INFO listening") == Noise("not JSON")
    assert read_line(b"{not json") == Noise("not valid JSON")
    assert read_line(b'{"hello": 1}') == Noise("JSON, but not a JSON-RPC message")
    assert isinstance(read_line(b"[" * 100_000 + b"]" * 100_000), TooDeep)


def test_an_engine_that_never_answers_raises_engine_timeout(tmp_path):
    path = tmp_path / "engine.sock"
    listener = socket.socket(socket.AF_UNIX)
    listener.bind(str(path))
    listener.listen()
    accepted: list[socket.socket] = []
    threading.Thread(target=lambda: accepted.append(listener.accept()[0]), daemon=True).start()
    api = BoundedAPIClient(base_url=f"unix://{path}", version="1.41", timeout=1)
    try:
        with pytest.raises(EngineTimeout, match=r"did not answer GET /containers/json within 1 s"):
            api.containers()
    finally:
        api.close()
        listener.close()
        for conn in accepted:
            conn.close()


def test_calls_are_named_without_version_or_ids():
    assert describe_call("POST", "http+docker://localhost/v1.41/containers/" + "0" * 64 + "/restart?t=1") == \
        "POST /containers/{id}/restart"
