"""A zoo server whose misbehaviour is at the protocol level (issue 11 §6): a tool failure answered as a JSON-RPC
error (-32603) instead of an isError result, notifications sent during calls, a slow (2.5 s) tool under the timeout,
and a tool that requires task-augmented execution. Near misses beside each: a failure answered as isError, a fast
tool, a tool whose taskSupport is optional. Standard library only; no network."""

from __future__ import annotations

import time
from typing import Any

from mcp_zoo.protocol import RpcError, Server, text_result, tool

READ_ONLY = {"readOnlyHint": True, "destructiveHint": False, "openWorldHint": False}
QUERY = {"query": {"type": "string", "description": "What to look up, e.g. 'invoice 42'."}}
SLOW_SECONDS = 2.5


class InternalError(Exception):
    """Raised by a tool handler: answered as a JSON-RPC error -32603 (the wrong way to report a tool failure)."""


def protocol_failures() -> None:
    server = Server("zoo-probe-protocol", [], list_changed=True)

    def backend_report(arguments: dict[str, Any]) -> dict[str, Any]:
        raise InternalError("report backend unavailable")

    def backend_summary(arguments: dict[str, Any]) -> dict[str, Any]:
        return text_result("The summary backend is unavailable; try again in a minute.", is_error=True)

    def slow_lookup(arguments: dict[str, Any]) -> str:
        time.sleep(SLOW_SECONDS)
        server.notify("notifications/message", {"level": "info", "logger": "lookup",
                                                "data": "slow lookup done \x1b[31mred\x1b[0m"})
        server.notify("notifications/tools/list_changed")  # nothing changed: no P8
        return f"Found 1 entry for {arguments.get('query', 'demo')!r}."

    def quick_lookup(arguments: dict[str, Any]) -> str:
        return f"Found 1 entry for {arguments.get('query', 'demo')!r}."

    def run_job(arguments: dict[str, Any]) -> str:
        return "job finished"  # called plainly only if the scanner ignores taskSupport

    server.tools = [
        tool("fetch_report", "Return the monthly report for a query, as text.", QUERY, annotations=READ_ONLY),
        tool("fetch_summary", "Return a one-line summary for a query.", QUERY, annotations=READ_ONLY),
        tool("slow_lookup", "Look up an entry by query; takes a few seconds.", QUERY, annotations=READ_ONLY),
        tool("quick_lookup", "Look up an entry by query from the cache.", QUERY, annotations=READ_ONLY),
        tool("long_job", "Run the nightly reconciliation job; runs as a task.", annotations=READ_ONLY,
             execution={"taskSupport": "required"}),
        tool("maybe_job", "Run the quick reconciliation job; may run as a task.", annotations=READ_ONLY,
             execution={"taskSupport": "optional"}),
    ]
    server.calls.update({"fetch_report": backend_report, "fetch_summary": backend_summary,
                         "slow_lookup": slow_lookup, "quick_lookup": quick_lookup, "long_job": run_job,
                         "maybe_job": run_job})
    server.handlers["tools/call"] = _answering_internal_errors(server)
    server.serve()


def _answering_internal_errors(server: Server) -> Any:
    """tools/call whose InternalError becomes a JSON-RPC error -32603 instead of an isError result."""
    def call(params: dict[str, Any]) -> Any:
        try:
            return server.call_tool(params)
        except InternalError as exc:
            raise RpcError(-32603, str(exc)) from exc
    return call

