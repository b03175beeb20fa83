"""Zoo servers that are hostile by size: messages of a few MiB that are valid JSON-RPC (many tools, deep schemas,
`$ref` cycles), a stdout flood during a call, a 30 MB tool result. Standard library only, no network."""

from __future__ import annotations

import sys
import time
from typing import Any

from mcp_zoo.protocol import Server, text_result, tool

MANY_TOOLS = 3_000
DEEP_LEVELS = 100
FLOOD_BYTES = 300 * 1024 * 1024
BIG_RESULT_BYTES = 30 * 1024 * 1024
READ_ONLY = {"readOnlyHint": True, "destructiveHint": False, "openWorldHint": False}


def _record_tool(i: int) -> dict[str, Any]:
    properties = {f"field_{j}": {"type": "string", "description": f"Value of field {j} of record {i}, as text."}
                  for j in range(6)}
    # Every tenth tool has a one-word description: the static rules must still see them all (S1 fires).
    description = "Records." if i % 10 == 0 else (
        f"Look up record number {i} in the catalogue and return its six fields as text; use it when the user asks "
        "about that record by number. Returns nothing when the record does not exist.")
    return tool(f"record_{i:04d}", description, properties, annotations=READ_ONLY)


def many_tools() -> None:
    """Serves 3,000 tools in one tools/list answer (~2 MB on one line)."""
    Server("zoo-many-tools", [_record_tool(i) for i in range(MANY_TOOLS)]).serve()


def _nested(levels: int) -> dict[str, Any]:
    schema: dict[str, Any] = {"type": "string", "description": "The innermost value."}
    for level in range(levels):
        schema = {"type": "object", "description": f"Level {levels - level}.", "properties": {"child": schema}}
    return schema


def deep_schema() -> None:
    """One tool whose input schema nests 100 levels (the SDK's JSON parser refuses it), beside a short one."""
    deep = tool("nested_config", "Apply a nested configuration tree and return the keys that changed.",
                {"tree": _nested(DEEP_LEVELS)})
    short = tool("x", "Does it.", {"v": {}})
    Server("zoo-deep-schema", [deep, short]).serve()


def ref_cycle() -> None:
    """Schemas whose `$ref`s form cycles (a -> b -> a, and a self-reference to the root)."""
    schema = {
        "type": "object",
        "$defs": {
            "a": {"type": "object", "properties": {"next": {"$ref": "#/$defs/b"}}},
            "b": {"type": "object", "properties": {"back": {"$ref": "#/$defs/a"}, "root": {"$ref": "#"}}},
        },
        "properties": {"node": {"$ref": "#/$defs/a"}, "self": {"$ref": "#"}},
    }
    linked = {"name": "walk_graph", "description": "Walks.", "inputSchema": schema}
    Server("zoo-ref-cycle", [linked]).serve()


def write_log_flood(total_bytes: int) -> None:
    """Write about total_bytes of log lines to stdout (where they do not belong)."""
    line = "DEBUG flushing the cache, this log line belongs on stderr " + "." * 60 + "\n"
    for _ in range(total_bytes // len(line)):
        sys.stdout.write(line)
    sys.stdout.flush()


def _flood(_arguments: dict[str, Any]) -> str:
    write_log_flood(FLOOD_BYTES)
    return "flushed"


def stdout_flood() -> None:
    """Serves normally; calling `flush_cache` writes 300 MB of log lines to stdout, then the server idles."""
    flush = tool("flush_cache", "Flush the server's in-memory cache and report when it is done.",
                 annotations={"readOnlyHint": False, "destructiveHint": False, "openWorldHint": False})
    Server("zoo-stdout-flood", [flush], calls={"flush_cache": _flood}).serve()
    while True:
        time.sleep(3600)


def big_result() -> None:
    """Calling `export_all` returns a 30 MB text result (one JSON-RPC line far over the 8 MiB bound)."""
    export = tool("export_all", "Export every stored record as one text document and return it.",
                  annotations=READ_ONLY)
    Server("zoo-big-result", [export],
           calls={"export_all": lambda _arguments: text_result("r" * BIG_RESULT_BYTES)}).serve()
    while True:
        time.sleep(3600)
