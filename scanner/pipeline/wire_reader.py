"""The scanner's own tolerant reader for one stdout line of an MCP stdio server.

The MCP SDK parses a line with pydantic's JSON parser, whose recursion limit rejects a valid message whose schemas
nest ~100 levels ("recursion limit exceeded"): a hostile (or merely generated) server could then hide its whole
tools/list as "stdout noise". Here the line is parsed with the standard library's json, whose bound (the
interpreter's recursion limit, ~1,000 levels) is far above what a real schema needs and fails cleanly, and only then
validated as a JSON-RPC message by the SDK's models from Python objects, which has no such limit.
"""

from __future__ import annotations

import json
from dataclasses import dataclass

import mcp_types
from pydantic import ValidationError


@dataclass(frozen=True)
class Message:
    """A line that is a JSON-RPC message."""

    message: mcp_types.JSONRPCMessage


@dataclass(frozen=True)
class Noise:
    """A line that is not a JSON-RPC message (log output, or JSON of another shape); `why` says which."""

    why: str


@dataclass(frozen=True)
class TooDeep:
    """A line nested deeper than the parser's bound (about the interpreter's recursion limit, ~1,000 levels)."""


Read = Message | Noise | TooDeep


def read_line(line: bytes) -> Read:
    """Classify and parse one stdout line."""
    stripped = line.strip()
    if not stripped.startswith((b"{", b"[")):
        return Noise("not JSON")
    try:
        value = json.loads(stripped)
    except RecursionError:
        return TooDeep()
    except ValueError:  # JSONDecodeError and UnicodeDecodeError
        return Noise("not valid JSON")
    try:
        return Message(mcp_types.jsonrpc_message_adapter.validate_python(value, by_name=False))
    except ValidationError:
        return Noise("JSON, but not a JSON-RPC message")
    except RecursionError:
        return TooDeep()
