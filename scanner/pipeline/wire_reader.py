"""The scanner's own tolerant reader for one stdout line of an MCP stdio server.

The MCP SDK parses a line with pydantic's JSON parser, whose recursion limit rejects a valid message whose schemas
nest ~100 levels ("recursion limit exceeded"): a hostile (or merely generated) server could then hide its whole
tools/list as "stdout noise". Here the line is parsed with the standard library's json, whose bound (the
interpreter's recursion limit, ~1,000 levels) is far above what a real schema needs and fails cleanly, and only then
validated as a JSON-RPC message by the SDK's models from Python objects, which has no such limit.

A tools/list answer is screened tool by tool first (`screen_tools_page`): the SDK validates a page as a whole, so one
tool its model rejects (a missing inputSchema, a name that is not a string) would lose every tool on the page. The
rejected tools are taken off the page and returned beside the message, as served, with the first problem found.

A line holding more than MAX_TYPED_VALUES JSON values where MCP's models check them is refused before any model sees
it (`TooMany`): pydantic keeps one error per value that fails (several for a union such as a call's content), so a
list of millions of empty arrays in an 8 MiB line (a call's `content`, a listing, a request's `messages`) held about
13 GB and a minute of CPU in one validation. Free JSON (schemas, structured content, `_meta`, `data`: FREE_JSON) is
not counted: the models take it as it is.

A lone surrogate (`"\\ud800"`: valid JSON, not valid Unicode) is read as the text of its escape, as every JSON the
scanner reads (scanner/json_input.py): kept as it came, it made the client's own answer to a request whose id held one
fail to be written, and the listing's lint fail, both ending the scan as an internal error.
"""

from __future__ import annotations

import json
import re
from collections.abc import Container
from dataclasses import dataclass
from typing import Any

import mcp_types
from pydantic import ValidationError

from scanner.json_input import without_lone_surrogates


MAX_PROBLEM_CHARS = 300
# About 21,000 for a page of 3,000 tools with six-property schemas; a page of the listing's 10,000 items fits.
MAX_TYPED_VALUES = 100_000
# Members whose values MCP's models take as free JSON, or check as one scalar whatever they hold (which costs one
# error however many values it holds): `_meta`'s one typed key is progressToken; `data` is a string in image and audio
# content, free in a log message or an error.
FREE_JSON = frozenset({"inputSchema", "outputSchema", "structuredContent", "requestedSchema", "_meta", "data"})
# The escape of a surrogate, high (group 1 one of 89AB) or low. One is lone when a high one is not followed at once by a
# low one, or a low one not preceded at once by a high one (a pair is the character it encodes). An escaped backslash
# before "ud800" may match too: the walk then changes nothing. The pattern starts with a literal, so a line is searched
# at memchr speed (a lookbehind alternative made it ~18 ms a megabyte: 30 ms a 1.2 MB file a probe read).
_SURROGATE_ESCAPE = re.compile(rb"\\u[dD]([89abAB]|[c-fC-F])[0-9a-fA-F]{2}")


@dataclass(frozen=True)
class RejectedTool:
    """A tool of a tools/list page that the SDK's Tool model rejects, as served (untrusted, uncapped)."""

    position: int  # on its page
    problem: str  # the first problem the model found, e.g. "inputSchema: Field required"
    definition: Any


@dataclass(frozen=True)
class Message:
    """A line that is a JSON-RPC message (and, for a tools/list answer, the tools taken off its page)."""

    message: mcp_types.JSONRPCMessage
    rejected_tools: tuple[RejectedTool, ...] = ()


@dataclass(frozen=True)
class Noise:
    """A line that is not a JSON-RPC message (log output, or JSON of another shape); `why` says which."""

    why: str


@dataclass(frozen=True)
class TooDeep:
    """A line nested deeper than the parser's bound (about the interpreter's recursion limit, ~1,000 levels)."""


@dataclass(frozen=True)
class TooMany:
    """A line holding more than MAX_TYPED_VALUES JSON values outside FREE_JSON: too many for the models to check."""


Read = Message | Noise | TooDeep | TooMany


def read_line(line: bytes, tools_list_ids: Container[Any] = ()) -> Read:
    """Classify and parse one stdout line; a response to one of `tools_list_ids` (the ids of tools/list requests
    in flight) is screened tool by tool."""
    stripped = line.strip()
    if not stripped.startswith((b"{", b"[")):
        return Noise("not JSON")
    try:
        value = json.loads(stripped)
    except RecursionError:
        return TooDeep()
    except ValueError:  # JSONDecodeError and UnicodeDecodeError
        return Noise("not valid JSON")
    if _too_many_values(stripped, value):
        return TooMany()
    if has_lone_surrogate(stripped):  # a lone one no UTF-8 output (the client's lines, the report) can carry
        value = without_lone_surrogates(value)
    rejected: tuple[RejectedTool, ...] = ()
    if isinstance(value, dict) and "result" in value and _hashable(value.get("id")) and value.get("id") in tools_list_ids:
        value, rejected = screen_tools_page(value)
    try:
        return Message(mcp_types.jsonrpc_message_adapter.validate_python(value, by_name=False), rejected)
    except ValidationError:
        return Noise("JSON, but not a JSON-RPC message")
    except RecursionError:
        return TooDeep()


def has_lone_surrogate(line: bytes) -> bool:
    """Whether `line` holds the escape of a lone surrogate (`_SURROGATE_ESCAPE`)."""
    high_until = -1  # where the low half of the high surrogate just seen must start
    for match in _SURROGATE_ESCAPE.finditer(line):
        is_high = match.group(1) in b"89abAB"
        if high_until >= 0:
            if match.start() != high_until or is_high:
                return True  # the high one before this was lone
            high_until = -1
        elif is_high:
            high_until = match.end()
        else:
            return True  # a low one with no high one before it
    return high_until >= 0


def _too_many_values(line: bytes, value: Any) -> bool:
    """Whether `value` (parsed from `line`) holds more than MAX_TYPED_VALUES values outside FREE_JSON members. Every
    value is the root, follows a comma or opens its container, so a line with fewer of those is not walked."""
    if 1 + line.count(b",") + line.count(b"[") + line.count(b"{") <= MAX_TYPED_VALUES:
        return False
    counted, stack = 0, [value]
    while stack:
        node = stack.pop()
        counted += 1
        if counted > MAX_TYPED_VALUES:
            return True
        if isinstance(node, dict):
            stack.extend(member for key, member in node.items() if key not in FREE_JSON)
        elif isinstance(node, list):
            stack.extend(node)
    return False


def screen_tools_page(response: dict[str, Any]) -> tuple[dict[str, Any], tuple[RejectedTool, ...]]:
    """The response with the tools the SDK's Tool model rejects taken off its page, and those tools."""
    result = response.get("result")
    tools = result.get("tools") if isinstance(result, dict) else None
    if not isinstance(result, dict) or not isinstance(tools, list):
        return response, ()
    kept: list[Any] = []
    rejected: list[RejectedTool] = []
    for position, item in enumerate(tools):
        try:
            mcp_types.Tool.model_validate(item, by_name=False)
        except ValidationError as exc:
            rejected.append(RejectedTool(position=position, problem=first_problem(exc), definition=item))
            continue
        except RecursionError:  # kept: the whole message then fails as too deep, as it would have anyway
            pass
        kept.append(item)
    if not rejected:
        return response, ()
    return {**response, "result": {**result, "tools": kept}}, tuple(rejected)


def first_problem(exc: ValidationError) -> str:
    """The first problem of a validation error, as `where: what` (no input values: they are untrusted)."""
    first = exc.errors(include_url=False, include_input=False)[0]
    where = ".".join(str(part) for part in first.get("loc", ()))[:120]
    return f"{where}: {str(first.get('msg', ''))}"[:MAX_PROBLEM_CHARS]


def problems(exc: ValidationError) -> str:
    """How many problems a validation error found, and the first (first_problem): "3 problems, first: where: what"."""
    return f"{exc.error_count()} problems, first: {first_problem(exc)}"


def _hashable(value: Any) -> bool:
    return isinstance(value, (str, int)) and not isinstance(value, bool)
