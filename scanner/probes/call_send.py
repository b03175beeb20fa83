"""One probe's tools/call, bounded by its timeout: what came back, or why nothing did (shared by the sandboxed
runner and the remote one)."""

from __future__ import annotations

import time
from typing import Any, Literal

import anyio
import mcp_types
from mcp import Client
from mcp.shared.exceptions import MCPError
from pydantic import ValidationError

from sandbox.core.untrusted import cap_text
from scanner.pipeline.wire_reader import first_problem
from scanner.probes.model import ProbeCall, ProbeResult, result_from_call, result_from_failure, result_refused

TIMEOUT_GRACE = 5.0  # the SDK's own read timeout fires first; this bounds everything else
# What the SDK's call_tool raises for an answer it received and refused: a result that is not a CallToolResult
# (ValidationError), structured content that breaks the tool's own outputSchema or is missing, an input_required
# answer it cannot resolve (RuntimeError). The server's doing: the call is recorded with the reason, the scan goes on.
REFUSED_ANSWERS = (ValidationError, RuntimeError)
REFUSAL_CHARS = 300
CLIENT_CLOSED = ("Connection closed", None)  # the message and data of the SDK's own -32000 (jsonrpc_dispatcher)


async def send_call(client: Client, call: ProbeCall, timeout: float,
                    closed: tuple[type[BaseException], ...] = ()) -> tuple[ProbeResult, dict[str, Any] | None]:
    """The call's result, and the answer as sent on the wire (None when there was no answer). `closed`: more
    exceptions that mean the connection is gone (a remote transport's)."""
    started = time.monotonic()
    try:
        with anyio.fail_after(timeout + TIMEOUT_GRACE):
            answer = await client.call_tool(call.tool, call.arguments, read_timeout_seconds=timeout)
        wire = answer.model_dump(mode="json", by_alias=True, exclude_none=True)
        return result_from_call(call, call_result=wire, latency_ms=_ms(started)), wire
    except TimeoutError:
        return result_from_failure(call, status="timeout", error=f"no answer within {timeout:g} s; cancelled",
                                   latency_ms=_ms(started)), None
    except MCPError as exc:
        code = exc.error.code
        status = failure_status(exc.error, elapsed=time.monotonic() - started, timeout=timeout)
        return result_from_failure(call, status=status, error=f"error {exc.error.code}: {exc.error.message}",
                                   latency_ms=_ms(started),
                                   error_code=code if status == "protocol_error" else None), None
    except REFUSED_ANSWERS as exc:
        return result_refused(call, why=refused_answer(exc), latency_ms=_ms(started)), None
    except (anyio.EndOfStream, anyio.ClosedResourceError, anyio.BrokenResourceError, ConnectionError,
            *closed) as exc:
        return result_from_failure(call, status="crashed", error=f"the connection closed ({type(exc).__name__})",
                                   latency_ms=_ms(started)), None


def failure_status(error: mcp_types.ErrorData, *, elapsed: float,
                   timeout: float) -> Literal["protocol_error", "timeout", "crashed"]:
    """What an MCPError says happened. The SDK raises its own read timeout as -32001 and a closed connection as -32000
    "Connection closed" (CLIENT_CLOSED), the codes a server may answer with too (-32000 is the first of the
    implementation-defined server errors many servers use): a -32001 that came before the timeout, or any other
    -32000, is an error the server answered with."""
    if error.code == mcp_types.REQUEST_TIMEOUT and elapsed >= timeout:
        return "timeout"
    if error.code == mcp_types.CONNECTION_CLOSED and (error.message, error.data) == CLIENT_CLOSED:
        return "crashed"
    return "protocol_error"


def refused_answer(exc: Exception) -> str:
    """Why the client refused the answer, in one line (capped: the client's words may quote the answer's values)."""
    if isinstance(exc, ValidationError):  # the first problem's place and kind, never the values
        return (f"the answer is not a tools/call result ({exc.error_count()} problems, first: "
                f"{first_problem(exc)}); refused by the MCP client")
    return f"the MCP client refused the answer: {cap_text(str(exc), REFUSAL_CHARS)}"


def _ms(started: float) -> float:
    return (time.monotonic() - started) * 1000


def named_fault(call: ProbeCall, result: ProbeResult, fault: str | None) -> ProbeResult:
    """A call that saw the connection close because the transport's reader ended the stream (`fault`: a stdout
    flood, a line over the bound) is recorded with that reason; any other result as it came."""
    if fault is None or result.status not in ("crashed", "timeout"):
        return result
    return result_from_failure(call, status="crashed", error=f"{fault} (the scanner closed the connection)",
                               latency_ms=result.latency_ms)
