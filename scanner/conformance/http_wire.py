"""Raw JSON-RPC over Streamable HTTP, for the conformance probe of a remote target (`scan --url`): each request its own
POST carrying the 2026-07-28 routing headers (MCP-Protocol-Version from the request's _meta, Mcp-Method, Mcp-Name), or
a variant of them the header checks ask for; each answer kept as served, with its HTTP status.

A JSON body is read whole; an SSE body event by event, until the answer to the request (what came before it with a
method is what the server sent unasked: counted, never answered, since 2026-07-28 clients send no responses). Bodies
are bounded (MAX_BODY_BYTES), redirects are followed only within the endpoint's origin (the SDK's rule), a session id
an initialize minted is sent back and ended with DELETE at the close. The probe never sends tools/call (`request`
refuses it), and the wire log never carries the URL or the user's headers."""

from __future__ import annotations

import base64
import json
import time
from dataclasses import dataclass, field
from typing import Any

import anyio
import httpx2
from mcp.shared._httpx_utils import stream_within_origin  # the SDK's same-origin redirect rule, used by its transports

from scanner.conformance.model import Answer
from scanner.conformance.wording import answer_text, exchange_line

MAX_BODY_BYTES = 1024 * 1024
MAX_LOG_LINES = 200
MAX_UNASKED = 200
ACCEPT = "application/json, text/event-stream"
UNAVAILABLE = frozenset({429, 502, 503, 504})  # too many requests, and a gateway's: not the MCP server's own answer
PROTOCOL_VERSION_KEY = "io.modelcontextprotocol/protocolVersion"
NAMED = {"tools/call": "name", "prompts/get": "name", "resources/read": "uri"}
NEVER_SENT = frozenset({"tools/call"})  # conformance is read-only: the probe phase alone calls tools, by its rules
SAFE_HEADER_CHARS = frozenset(chr(c) for c in range(0x20, 0x7F))
Routing = dict[str, str | None]  # header -> value, or None to leave the header out


@dataclass
class SseEvent:
    name: str = "message"
    data: list[str] = field(default_factory=list)


def header_value(value: str) -> str:
    """A value as a header carries it: plain when safe ASCII, else the Base64 sentinel form of the specification."""
    plain = value and set(value) <= SAFE_HEADER_CHARS and value == value.strip() and not (
        value.startswith("=?base64?") and value.endswith("?="))
    return value if plain else f"=?base64?{base64.b64encode(value.encode()).decode()}?="


def routing_headers(method: str, params: dict[str, Any]) -> Routing:
    """The request-metadata headers a 2026-07-28 client sends for this request."""
    meta = params.get("_meta")
    version = meta.get(PROTOCOL_VERSION_KEY) if isinstance(meta, dict) else None
    headers: Routing = {"MCP-Protocol-Version": version if isinstance(version, str) else None, "Mcp-Method": method}
    name = params.get(NAMED.get(method, ""))
    if isinstance(name, str):
        headers["Mcp-Name"] = header_value(name)
    return headers


async def sse_events(response: httpx2.Response, max_bytes: int = MAX_BODY_BYTES) -> Any:
    """The events of an SSE body, as they arrive, until it ends or `max_bytes` were read."""
    event, read = SseEvent(), 0
    async for line in response.aiter_lines():
        read += len(line) + 1
        if read > max_bytes:
            return
        if not line.strip():
            if event.data or event.name != "message":
                yield event
            event = SseEvent()
        elif line.startswith("event:"):
            event.name = line[6:].strip()[:100] or "message"
        elif line.startswith("data:"):
            event.data.append(line[5:].removeprefix(" "))
    if event.data:
        yield event


class HttpWire:
    """`request` POSTs one JSON-RPC request to the endpoint and waits (at most `timeout`) for its answer."""

    def __init__(self, client: httpx2.AsyncClient, url: str) -> None:
        self.client = client
        self.url = url
        self.log: list[str] = []
        self.unasked: list[str] = []
        self.session_id: str | None = None
        self._next_id = 1

    async def request(self, method: str, params: dict[str, Any], timeout: float, *,
                      routing: Routing | None = None) -> Answer:
        if method in NEVER_SENT:
            raise ValueError(f"the conformance probe never sends {method}")
        request_id, self._next_id = self._next_id, self._next_id + 1
        headers = {**routing_headers(method, params), **(routing or {})}
        message = {"jsonrpc": "2.0", "id": request_id, "method": method, "params": params}
        began = time.monotonic()
        answer = Answer(method, timed_out=True, seconds=round(timeout, 3))
        with anyio.move_on_after(timeout):
            answer = await self._post(message, headers, request_id, method)
        if answer.timed_out:
            self._note("<-", f"#{request_id} {answer_text(answer)}")
        return Answer(answer.method, result=answer.result, error=answer.error, timed_out=answer.timed_out,
                      closed=answer.closed, status=answer.status,
                      seconds=answer.seconds if answer.timed_out else round(time.monotonic() - began, 3))

    async def notify(self, method: str, params: dict[str, Any] | None = None) -> None:
        message = {"jsonrpc": "2.0", "method": method, **({"params": params} if params else {})}
        with anyio.move_on_after(10):
            await self._post(message, {"Mcp-Method": method}, None, method)

    async def quiet(self, seconds: float) -> None:
        """Nothing to wait on: 2026-07-28 Streamable HTTP has no standing stream (the window is 0 over HTTP)."""

    async def close(self) -> None:
        """End a session an initialize minted (2025-11-25 servers), as the SDK's client does."""
        if self.session_id is None:
            return
        with anyio.move_on_after(5):
            try:
                await self.client.delete(self.url, headers={"Mcp-Session-Id": self.session_id})
            except httpx2.HTTPError:
                pass  # the session times out on the server's side; nothing of the probe depends on it

    async def _post(self, message: dict[str, Any], routing: Routing, request_id: int | None, method: str) -> Answer:
        headers = {"Accept": ACCEPT, "Content-Type": "application/json",
                   **{name: value for name, value in routing.items() if value is not None}}
        if self.session_id is not None:
            headers["Mcp-Session-Id"] = self.session_id
        body = json.dumps(message, separators=(",", ":"))
        shown = ", ".join(f"{name}: {value}" for name, value in routing.items() if value is not None)
        self._note("->", f"POST [{shown}] {body}")
        try:
            async with stream_within_origin(self.client, "POST", self.url, headers=headers, content=body) as response:
                if method == "initialize" and response.headers.get("mcp-session-id"):
                    self.session_id = response.headers["mcp-session-id"][:200]
                return await self._answer(response, request_id, method)
        except httpx2.HTTPError as exc:
            self._note("<-", f"(no response: {type(exc).__name__})")
            return Answer(method, closed=True)

    async def _answer(self, response: httpx2.Response, request_id: int | None, method: str) -> Answer:
        status = response.status_code
        kind = response.headers.get("content-type", "").split(";")[0].strip().lower()
        if kind == "text/event-stream":
            async for event in sse_events(response):
                found = self._receive("\n".join(event.data), request_id, status, method)
                if found is not None:
                    return found
            return self._unreadable(method, status, "an SSE stream that ended without the answer")
        raw = await _read_capped(response)
        if request_id is None:
            self._note("<-", f"HTTP {status}")
            return Answer(method, status=status)
        found = self._receive(raw.decode("utf-8", "replace"), request_id, status, method) if raw else None
        return found or self._unreadable(method, status, f"a {kind or 'untyped'} body with no JSON-RPC answer")

    def _receive(self, text: str, request_id: int | None, status: int, method: str) -> Answer | None:
        """The answer, when `text` is the JSON-RPC answer to `request_id`; a message with a method is noted unasked."""
        try:
            message = json.loads(text)
        except (ValueError, RecursionError):
            return None
        if not isinstance(message, dict):
            return None
        self._note("<-", f"HTTP {status} {text}")
        sent = message.get("method")
        if isinstance(sent, str):
            if len(self.unasked) < MAX_UNASKED:
                self.unasked.append(sent[:200])
            return None
        if "result" not in message and "error" not in message:
            return None
        if message.get("id") not in (request_id, None):
            return None
        error = message.get("error")
        return Answer(method, result=message.get("result"), status=status,
                      error=error if isinstance(error, dict) else ({"message": "not an object"} if error else None))

    def _unreadable(self, method: str, status: int, what: str) -> Answer:
        """A response with no JSON-RPC answer: the server's refusal, unless its status says the server was not
        reached or would not serve now (rate limited, a gateway's error): that request failed, as a dropped connection
        does, so no check reads it as the server's answer."""
        self._note("<-", f"HTTP {status}: {what}")
        if status in UNAVAILABLE:
            return Answer(method, status=status, closed=True)
        return Answer(method, status=status, error={"message": f"HTTP {status}: {what}"})

    def _note(self, arrow: str, text: str) -> None:
        if len(self.log) < MAX_LOG_LINES:
            self.log.append(exchange_line(arrow, text))


async def _read_capped(response: httpx2.Response, limit: int = MAX_BODY_BYTES) -> bytes:
    chunks: list[bytes] = []
    size = 0
    async for chunk in response.aiter_bytes():
        chunks.append(chunk)
        size += len(chunk)
        if size > limit:
            break
    return b"".join(chunks)[:limit]
