"""One probe's tools/call, bounded by its timeout: what came back, or why nothing did (shared by the sandboxed
runner and the remote one)."""

from __future__ import annotations

import re
import time
from typing import Any, Literal

import anyio
import mcp_types
from pydantic import ValidationError

from sandbox.core.untrusted import cap_text
from scanner.client.session import RpcError
from scanner.pipeline.pages import as_served
from scanner.pipeline.wire_reader import problems
from scanner.probes.model import ProbeCall, ProbeResult, result_from_call, result_from_failure, result_refused

TIMEOUT_GRACE = 5.0  # the SDK's own read timeout fires first; this bounds everything else
# What the client's call_tool raises (the SDK's; the scanner's own in the same words) for an answer it refused: a
# result that is not a CallToolResult (ValidationError), or a RuntimeError with one of these messages
# (mcp/client/session.py, _input_required.py):
# structured content missing or breaking the tool's own outputSchema, a schema it cannot use, an input_required
# answer it cannot resolve. The server's doing: the call is recorded with the reason, the scan goes on. Any other
# RuntimeError is not known to be the server's: it fails the scan as an internal error.
SDK_REFUSALS = re.compile(r"Tool .* has an output schema but did not return structured content|Invalid structured "
                          r"content returned by tool |Invalid schema for tool |Server returned InputRequiredResult",
                          re.DOTALL)
REFUSAL_CHARS = 300
# The messages of the -32000 errors the SDK makes up itself when the connection is gone (never with data): its
# dispatcher's, and its Streamable HTTP transport's for a stream that ended or failed (mcp/client/streamable_http.py).
CLIENT_CLOSED = re.compile(r"Connection closed|SSE stream ended without a response|SSE stream failed: .*|"
                           r"server answered a request with 202 Accepted", re.DOTALL)


async def send_call(client: Any, call: ProbeCall, timeout: float, closed: tuple[type[BaseException], ...] = (),
                    answered: tuple[type[Exception], ...] = ()) -> tuple[ProbeResult, dict[str, Any] | None]:
    """The call's result, and the answer as sent on the wire (None when there was no answer), over the scanner's own
    client or the SDK's. `closed`: more exceptions that mean the connection is gone (a remote transport's);
    `answered`: the client's exceptions for an error answer besides RpcError (the SDK's MCPError)."""
    started = time.monotonic()
    try:
        with anyio.fail_after(timeout + TIMEOUT_GRACE):
            answer = await client.call_tool(call.tool, call.arguments, read_timeout_seconds=timeout)
    except TimeoutError:
        return result_from_failure(call, status="timeout", error=f"no answer within {timeout:g} s; cancelled",
                                   latency_ms=_ms(started)), None
    except (RpcError, *answered) as exc:
        code = exc.error.code
        status = failure_status(exc.error, elapsed=time.monotonic() - started, timeout=timeout)
        return result_from_failure(call, status=status, error=f"error {exc.error.code}: {exc.error.message}",
                                   latency_ms=_ms(started),
                                   error_code=code if status == "protocol_error" else None,
                                   error_data=exc.error.data if status == "protocol_error" else None), None
    except (ValidationError, RuntimeError) as exc:
        if not is_refusal(exc):
            raise
        return result_refused(call, why=refused_answer(exc), latency_ms=_ms(started)), None
    except (anyio.EndOfStream, anyio.ClosedResourceError, anyio.BrokenResourceError, ConnectionError,
            *closed) as exc:
        return result_from_failure(call, status="crashed", error=f"the connection closed ({type(exc).__name__})",
                                   latency_ms=_ms(started)), None
    wire = as_served(answer)
    return result_from_call(call, call_result=wire, latency_ms=_ms(started)), wire


def is_refusal(exc: Exception) -> bool:
    """Whether `exc` is the SDK's client refusing the answer it received (SDK_REFUSALS)."""
    return isinstance(exc, ValidationError) or SDK_REFUSALS.match(str(exc)) is not None


def failure_status(error: mcp_types.ErrorData, *, elapsed: float,
                   timeout: float) -> Literal["protocol_error", "timeout", "crashed"]:
    """What an error answer (RpcError, the SDK's MCPError) says happened. Both clients raise their own read timeout
    as -32001 and a connection gone as -32000 with one of CLIENT_CLOSED's messages, the codes a server may answer
    with too (-32000 is the first of the implementation-defined server errors many servers use): a -32001 that came
    before the timeout, or any other -32000, is an error the server answered with."""
    if error.code == mcp_types.REQUEST_TIMEOUT and elapsed >= timeout:
        return "timeout"
    if error.code == mcp_types.CONNECTION_CLOSED and error.data is None and CLIENT_CLOSED.fullmatch(error.message):
        return "crashed"
    return "protocol_error"


def refused_answer(exc: Exception) -> str:
    """Why the client refused the answer, in one line (capped: the client's words may quote the answer's values)."""
    if isinstance(exc, ValidationError):  # the first problem's place and kind, never the values
        return f"the answer is not a tools/call result ({problems(exc)}); refused by the MCP client"
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


async def answers(client: Any, timeout: float) -> bool:
    """Whether the server still answers (tools/list: ping is gone from the 2026 protocol) within `timeout`."""
    try:
        with anyio.fail_after(timeout):
            await client.list_tools()
        return True
    except Exception:  # noqa: BLE001 - any failure means the server can't be used any more
        return False
