"""The bare HTTP error statuses a remote server answered with (`scan --url`).

The SDK's transport answers a 4xx/5xx response that carries no JSON-RPC error with a stand-in (-32603 "Server
returned an error response", or -32601 "Not Found" before a session), so the status is lost: a refused token (401,
403) read like a server bug, and a tool call that a rate limit (429) or a failing gateway (5xx) kept from its tool read
like the tool's own answer, in a scan that then said complete. The client's response hook (`HttpRefusals.record`)
notes each such status by the JSON-RPC method it answered; the listing's error names it, and the tool calls it
answered are one error of the probe phase (the scan is incomplete: those tools were not exercised)."""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from http import HTTPStatus

import httpx2

STAND_INS = ("Server returned an error response", "error -32601: Not Found")
HINTS = {401: "the server wants credentials it was not sent, or refused them",
         403: "the server refused this request (the credentials sent, or their scope)",
         429: "the server is rate-limiting this client"}


@dataclass(frozen=True)
class Refusal:
    method: str
    status: int

    def said(self) -> str:
        """The status with its standard phrase (never the server's own reason text) and what it usually means."""
        try:
            phrase = f" {HTTPStatus(self.status).phrase}"
        except ValueError:
            phrase = ""
        hint = HINTS.get(self.status)
        return f"HTTP {self.status}{phrase}" + (f": {hint}" if hint else "")


@dataclass
class HttpRefusals:
    seen: list[Refusal] = field(default_factory=list)

    async def record(self, response: httpx2.Response) -> None:
        """A response hook: note a POST answered with a 4xx/5xx whose body is not a JSON-RPC error (one the SDK
        reads and reports itself). Only a JSON body is read here, as the SDK would (bounded by remote_body's cap,
        which runs first; the SDK reads the same bytes again): any other is never read, so an endless one cannot
        hold the request."""
        if response.status_code < 400 or response.request.method != "POST":
            return
        body = b""
        if response.headers.get("content-type", "").lower().startswith("application/json"):
            try:
                body = await response.aread()
            except httpx2.TransportError:  # over the bound, cut or too slow: no JSON-RPC error the SDK could read
                pass
        if not _is_error_message(body):
            self.seen.append(Refusal(_method(response.request), response.status_code))

    def explained(self, error: str) -> str:
        """A session error, with the HTTP status of the last non-call refusal when the SDK's stand-in hid it."""
        refusals = [refusal for refusal in self.seen if refusal.method != "tools/call"]
        if not refusals or not error.endswith(STAND_INS):
            return error
        return f"{error} ({refusals[-1].said()})"

    def calls_line(self) -> str | None:
        """One line for the tool calls answered with a bare HTTP error, or None."""
        calls = [refusal for refusal in self.seen if refusal.method == "tools/call"]
        if not calls:
            return None
        statuses = ", ".join(dict.fromkeys(refusal.said() for refusal in calls))
        return (f"probing: {len(calls)} tool call(s) were answered with an HTTP error instead of MCP ({statuses}); "
                "those tools were not exercised")


def _method(request: httpx2.Request) -> str:
    """The JSON-RPC method a request sent ("" when its body is not one message)."""
    try:
        message = _json_object(request.content)
    except httpx2.RequestNotRead:
        return ""
    method = message.get("method")
    return method if isinstance(method, str) else ""


def _is_error_message(body: bytes) -> bool:
    error = _json_object(body).get("error")
    return isinstance(error, dict) and isinstance(error.get("code"), int)


def _json_object(text: bytes) -> dict[str, object]:
    try:
        value = json.loads(text)
    except (ValueError, RecursionError):  # a server's body: not JSON, or nested past the parser's depth
        return {}
    return value if isinstance(value, dict) else {}
