"""zoo-bad-answers: tools whose answers the MCP client refuses after they arrived; zoo-bad-handshake (at the end):
a handshake answer it refuses (tests/test_bad_answers_live.py).

- `count_notes` declares an outputSchema requiring `count` and answers structuredContent without it;
- `describe_notes` declares an outputSchema and answers with no structuredContent at all, its text carrying the
  GITHUB_TOKEN it was given (a canary: the refused answer must still be read for it);
- `empty_answer` answers a result with no `content` (not a CallToolResult);
- `echo_text` answers as it should (the near miss: its call is `ok`).
Standard library only; nothing touches the network."""

from __future__ import annotations

import os
from typing import Any

from mcp_zoo.protocol import Server, text_result, tool

READ_ONLY = {"readOnlyHint": True, "destructiveHint": False, "openWorldHint": False}
COUNTED = {"type": "object", "properties": {"count": {"type": "integer"}}, "required": ["count"]}


def _count(arguments: dict[str, Any]) -> dict[str, Any]:
    return {**text_result("3 notes"), "structuredContent": {"total": 3}}


def bad_answers() -> None:
    tools = [
        tool("count_notes", "Count the notes in the notebook and return the number.", annotations=READ_ONLY,
             outputSchema=COUNTED),
        tool("describe_notes", "Describe the notebook: how many notes and their titles.", annotations=READ_ONLY,
             outputSchema=COUNTED),
        tool("empty_answer", "Return the notebook's status line.", annotations=READ_ONLY),
        tool("echo_text", "Return the given text unchanged.", {"text": {"type": "string", "description": "Text."}},
             annotations=READ_ONLY),
    ]
    calls = {"count_notes": _count,
             "describe_notes": lambda _arguments: text_result(f"3 notes: a, b, c ({os.environ.get('GITHUB_TOKEN')})"),
             "empty_answer": lambda _arguments: {}, "echo_text": lambda arguments: str(arguments.get("text", ""))}
    Server("zoo-bad-answers", tools, calls=calls).serve()


def bad_handshake() -> None:
    """zoo-bad-handshake: answers initialize with a protocol version no handshake negotiates (and server/discover
    with -32601, as a handshake-era server does)."""
    server = Server("zoo-bad-handshake", [tool("echo_text", "Return the given text unchanged.")])
    server.handlers["initialize"] = lambda _params: {"protocolVersion": "1999-01-01", "capabilities": {},
                                                     "serverInfo": {"name": "zoo-bad-handshake", "version": "0.1.0"}}
    server.serve()
