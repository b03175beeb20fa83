"""A minimal MCP stdio server loop: newline-delimited JSON-RPC, handshake, tools/list with paging, ping."""

from __future__ import annotations

import json
import sys
from collections.abc import Callable
from typing import Any

Handler = Callable[[dict[str, Any]], Any]


def tool(name: str, description: str, properties: dict[str, Any] | None = None, **extra: Any) -> dict[str, Any]:
    return {"name": name, "description": description,
            "inputSchema": {"type": "object", "properties": properties or {}}, **extra}


class Server:
    def __init__(self, name: str, tools: list[dict[str, Any]], page_size: int = 0, instructions: str | None = None):
        self.name = name
        self.tools = tools
        self.page_size = page_size
        self.instructions = instructions
        self.handlers: dict[str, Handler] = {
            "initialize": self.initialize,
            "ping": lambda _params: {},
            "tools/list": self.list_tools,
        }

    def initialize(self, params: dict[str, Any]) -> dict[str, Any]:
        result: dict[str, Any] = {
            "protocolVersion": params.get("protocolVersion", "2025-06-18"),
            "capabilities": {"tools": {"listChanged": False}},
            "serverInfo": {"name": self.name, "version": "0.1.0"},
        }
        if self.instructions:
            result["instructions"] = self.instructions
        return result

    def list_tools(self, params: dict[str, Any]) -> dict[str, Any]:
        if not self.page_size:
            return {"tools": self.tools}
        start = int(params.get("cursor") or 0)
        page = self.tools[start : start + self.page_size]
        result: dict[str, Any] = {"tools": page}
        if start + self.page_size < len(self.tools):
            result["nextCursor"] = str(start + self.page_size)
        return result

    def serve(self) -> None:
        for line in sys.stdin:
            if not line.strip():
                continue
            message = json.loads(line)
            if "id" not in message:
                continue  # a notification
            handler = self.handlers.get(message.get("method", ""))
            if handler is None:
                reply = {"jsonrpc": "2.0", "id": message["id"],
                         "error": {"code": -32601, "message": f"method not found: {message.get('method')}"}}
            else:
                reply = {"jsonrpc": "2.0", "id": message["id"], "result": handler(message.get("params") or {})}
            sys.stdout.write(json.dumps(reply) + "\n")
            sys.stdout.flush()
