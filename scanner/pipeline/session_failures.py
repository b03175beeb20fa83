"""What ended an MCP session early, in one line for the report: a timeout, an error answer (the SDK's MCPError or
the scanner's own client's RpcError: both carry the JSON-RPC ErrorData as `.error`), the stream's own fault (a flood,
a line too deep), an engine call that did not answer, or a closed connection."""

from __future__ import annotations

import mcp_types

from sandbox.core.engine import EngineTimeout
from scanner.pipeline.transport import WireHealth


def error_answer(exc: BaseException) -> mcp_types.ErrorData | None:
    """The JSON-RPC error a server answered with, when that is what `exc` is."""
    error = getattr(exc, "error", None)
    return error if isinstance(error, mcp_types.ErrorData) else None


def first_leaf(group: BaseExceptionGroup) -> BaseException:
    first = group.exceptions[0]
    return first_leaf(first) if isinstance(first, BaseExceptionGroup) else first


def explain(step: str, exc: BaseException, health: WireHealth, timeout: float) -> str:
    if isinstance(exc, EngineTimeout):
        return f"{step}: {exc}"
    if health.fault:
        return f"{step}: {health.fault}"
    if isinstance(exc, TimeoutError):
        return f"{step}: the server did not answer within {timeout:g} s"
    error = error_answer(exc)
    if error is not None:
        return f"{step}: the server answered with error {error.code}: {error.message[:300]}"
    return f"{step}: the connection to the server closed ({type(exc).__name__})"
