"""A minimal MCP stdio server loop: newline-delimited JSON-RPC, handshake, tools/list with paging, ping, tools/call."""

from __future__ import annotations

import json
import sys
from collections.abc import Callable
from typing import Any

Handler = Callable[[dict[str, Any]], Any]
ToolFn = Callable[[dict[str, Any]], Any]  # arguments -> a CallToolResult dict, or a str (one text block)


def text_result(text: str, is_error: bool = False) -> dict[str, Any]:
    result: dict[str, Any] = {"content": [{"type": "text", "text": text}]}
    if is_error:
        result["isError"] = True
    return result


def tool(name: str, description: str, properties: dict[str, Any] | None = None, **extra: Any) -> dict[str, Any]:
    return {"name": name, "description": description,
            "inputSchema": {"type": "object", "properties": properties or {}}, **extra}


class RpcError(Exception):
    """Raised by a handler to answer with a JSON-RPC error of this code."""

    def __init__(self, code: int, message: str) -> None:
        super().__init__(message)
        self.code = code


class Server:
    def __init__(self, name: str, tools: list[dict[str, Any]], page_size: int = 0, instructions: str | None = None,
                 calls: dict[str, ToolFn] | None = None, list_changed: bool = False):
        self.name = name
        self.tools = tools
        self.page_size = page_size
        self.instructions = instructions
        self.calls = calls or {}
        self.list_changed = list_changed
        self.after_reply: list[dict[str, Any]] = []  # notifications to send once the current reply is out
        self.handlers: dict[str, Handler] = {
            "initialize": self.initialize,
            "ping": lambda _params: {},
            "tools/list": self.list_tools,
        }
        if self.calls:
            self.handlers["tools/call"] = self.call_tool

    def call_tool(self, params: dict[str, Any]) -> Any:
        fn = self.calls.get(params.get("name", ""))
        if fn is None:
            raise LookupError(f"unknown tool: {params.get('name')}")
        arguments = params.get("arguments")
        result = fn(arguments if isinstance(arguments, dict) else {})
        return text_result(result) if isinstance(result, str) else result

    def notify(self, method: str, params: dict[str, Any] | None = None) -> None:
        """Queue a notification to send right after the reply being handled."""
        self.after_reply.append({"jsonrpc": "2.0", "method": method, **({"params": params} if params else {})})

    def initialize(self, params: dict[str, Any]) -> dict[str, Any]:
        result: dict[str, Any] = {
            "protocolVersion": params.get("protocolVersion", "2025-06-18"),
            "capabilities": {"tools": {"listChanged": self.list_changed}},
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
                try:
                    reply = {"jsonrpc": "2.0", "id": message["id"], "result": handler(message.get("params") or {})}
                except LookupError as exc:
                    reply = {"jsonrpc": "2.0", "id": message["id"], "error": {"code": -32602, "message": str(exc)}}
                except RpcError as exc:
                    reply = {"jsonrpc": "2.0", "id": message["id"], "error": {"code": exc.code, "message": str(exc)}}
            sys.stdout.write(json.dumps(reply) + "\n")
            for notification in self.after_reply:
                sys.stdout.write(json.dumps(notification) + "\n")
            self.after_reply.clear()
            sys.stdout.flush()
