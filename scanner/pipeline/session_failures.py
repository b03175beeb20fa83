"""What ended an MCP session early, in one line for the report: a timeout, an error answer (the SDK's MCPError or
the scanner's own client's RpcError: both carry the JSON-RPC ErrorData as `.error`), the stream's own fault (a flood,
a line too deep), an engine call that did not answer, a handshake answer the client refused (is_handshake_refusal),
or a closed connection."""

from __future__ import annotations

import mcp_types
from pydantic import ValidationError

from sandbox.core.engine import EngineTimeout
from sandbox.core.untrusted import cap_text
from scanner.client.session import ClientRpcError
from scanner.pipeline.transport import WireHealth
from scanner.pipeline.wire_reader import problems

# What the SDK's client raises when it refuses the server's answer to its handshake: a result that is not an
# InitializeResult or DiscoverResult (ValidationError), a version it does not negotiate (a RuntimeError with one of
# these messages: mcp/client/session.py). The server's doing, recorded like any other session ender; any other
# RuntimeError is not known to be the server's and is left to fail the scan as an internal error.
HANDSHAKE_REFUSALS = ("Unsupported protocol version from the server", "No mutually supported modern protocol version")


def is_handshake_refusal(exc: BaseException) -> bool:
    """Whether `exc` is the SDK's client refusing the server's handshake answer (HANDSHAKE_REFUSALS)."""
    if isinstance(exc, ValidationError):
        return True
    return type(exc) is RuntimeError and str(exc).startswith(HANDSHAKE_REFUSALS)


def error_answer(exc: BaseException) -> mcp_types.ErrorData | None:
    """The JSON-RPC error a server answered with, when that is what `exc` is (not the scanner's own client's
    timeout or closed connection, raised in the same shape)."""
    error = getattr(exc, "error", None)
    return error if isinstance(error, mcp_types.ErrorData) and not isinstance(exc, ClientRpcError) else None


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
    if isinstance(exc, ClientRpcError):
        if exc.error.code == mcp_types.REQUEST_TIMEOUT:
            return f"{step}: the server did not answer within {exc.timeout:g} s"
        return f"{step}: the connection to the server closed before it answered"
    error = error_answer(exc)
    if error is not None:
        return f"{step}: the server answered with error {error.code}: {error.message[:300]}"
    if isinstance(exc, ValidationError):
        return f"{step}: the answer does not match the MCP schema ({problems(exc)})"
    if isinstance(exc, RuntimeError):
        return f"{step}: the MCP client refused the answer ({cap_text(str(exc), 300)})"
    return f"{step}: the connection to the server closed ({type(exc).__name__})"
