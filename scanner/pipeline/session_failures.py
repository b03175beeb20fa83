"""What ended an MCP session early, in one line for the report: a timeout, an error answer (the SDK's MCPError or
the scanner's own client's RpcError: both carry the JSON-RPC ErrorData as `.error`), the stream's own fault (a flood,
a line too deep), an engine call that did not answer, a handshake answer the client refused (HANDSHAKE_REFUSALS), or
a closed connection."""

from __future__ import annotations

import mcp_types
from pydantic import ValidationError

from sandbox.core.engine import EngineTimeout
from sandbox.core.untrusted import cap_text
from scanner.pipeline.transport import WireHealth
from scanner.pipeline.wire_reader import first_problem

# What the SDK's client raises when it refuses the server's answer to its handshake: a version it does not negotiate
# (RuntimeError "Unsupported protocol version ..."), a result that is not an InitializeResult (ValidationError). The
# server's doing, recorded like any other session ender (only while connecting: later, a RuntimeError is not known
# to be the server's).
HANDSHAKE_REFUSALS = (ValidationError, RuntimeError)


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
    if isinstance(exc, ValidationError):
        return (f"{step}: the answer does not match the MCP schema ({exc.error_count()} problems, first: "
                f"{first_problem(exc)})")
    if isinstance(exc, RuntimeError):
        return f"{step}: the MCP client refused the answer ({cap_text(str(exc), 300)})"
    return f"{step}: the connection to the server closed ({type(exc).__name__})"
