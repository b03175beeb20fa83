"""The scan's MCP client over the sandbox's attached stdio, on mcp_types alone: what the first listing and the probes
ask a server, matched to what the MCP SDK's `Client(mode="auto", cache=None)` sends and raises for the same answers
(docs/own-client.md, pinned by tests/test_client_parity*.py), without importing the SDK (about 0.3 s of CPU a scan).

The era negotiation is scanner.client.negotiation's; every request after it carries a 2026-07-28 session's `_meta`
stamp; each result is read as its revision's schema and the version-free model say (scanner.client.surface); a
call's structured content is checked against the tool's output schema (scanner.client.tool_schemas). Errors are the
SDK's: RpcError with its codes (-32001 the client's own timeout, -32000 a closed connection), RuntimeError for an
answer the client refuses, pydantic's ValidationError for one that is not the method's result."""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from contextlib import AbstractAsyncContextManager, AsyncExitStack
from types import TracebackType
from typing import Any

import anyio
import mcp_types
from anyio.streams.memory import MemoryObjectReceiveStream, MemoryObjectSendStream
from pydantic import BaseModel

from scanner.client.negotiation import Negotiated, modern_meta, negotiate
from scanner.client.server_requests import answerer, refusal
from scanner.client.session import RpcError, RpcSession
from scanner.client.surface import (HANDSHAKE_ERA_DEFAULT, RepeatedListing, is_modern, preload_revisions,
                                    read_notification, read_result)
from scanner.client.tool_schemas import ToolSchemas

Streams = tuple[MemoryObjectReceiveStream[mcp_types.JSONRPCMessage | Exception],
                MemoryObjectSendStream[mcp_types.JSONRPCMessage]]
MessageHandler = Callable[[Any], Awaitable[None]]
INPUT_ROUNDS = 10  # the SDK's bound on input_required rounds
# its wait before resending a call answered with requestState alone: the first, doubled each round up to the last
FIRST_DELAY, LAST_DELAY = 0.05, 0.25
_RELIST_PAGES = 100  # the pages re-listed, at most, after -32020


class ScanClient:
    """The client, its session open while it is entered (`async with`, which negotiates): the SDK's Client's
    surface as the scan uses it (the four listings, call_tool, the session's properties)."""

    def __init__(self, transport: AbstractAsyncContextManager[Streams], *, read_timeout: float,
                 client_info: mcp_types.Implementation, message_handler: MessageHandler | None = None) -> None:
        self._transport = transport
        self.read_timeout_seconds = read_timeout
        self._client_info = client_info
        self._handler = message_handler
        self._stack = AsyncExitStack()
        self._session: RpcSession | None = None
        self._negotiated: Negotiated | None = None
        self._schemas = ToolSchemas()
        self._listing = RepeatedListing()

    async def __aenter__(self) -> ScanClient:
        async with AsyncExitStack() as stack:
            receive, send = await stack.enter_async_context(self._transport)
            self._session = await stack.enter_async_context(RpcSession(
                receive, send, on_notification=self._notified, first_id=1, answer=answerer(self._version),
                cancel_reason=lambda timeout: f"timed out after {timeout}s", sdk_codes=True))
            preload_revisions()  # while the server boots
            await negotiate(self._session, self._client_info, self.read_timeout_seconds, self._settled)
            self._stack = stack.pop_all()
        return self

    async def __aexit__(self, exc_type: type[BaseException] | None, exc: BaseException | None,
                        traceback: TracebackType | None) -> bool | None:
        return await self._stack.__aexit__(exc_type, exc, traceback)

    # ---- what the session settled ------------------------------------------------------------------------------

    def _settled(self, negotiated: Negotiated) -> None:
        self._negotiated = negotiated

    def _version(self) -> str:
        return self._negotiated.protocol_version if self._negotiated is not None else HANDSHAKE_ERA_DEFAULT

    @property
    def protocol_version(self) -> str | None:
        return self._negotiated.protocol_version if self._negotiated is not None else None

    @property
    def server_info(self) -> mcp_types.Implementation | None:
        return self._negotiated.server_info if self._negotiated is not None else None

    @property
    def server_capabilities(self) -> mcp_types.ServerCapabilities | None:
        return self._negotiated.capabilities if self._negotiated is not None else None

    @property
    def instructions(self) -> str | None:
        return self._negotiated.instructions if self._negotiated is not None else None

    # ---- requests ----------------------------------------------------------------------------------------------

    async def _ask(self, method: str, params: dict[str, Any] | None, timeout: float | None = None,
                   reader: Callable[[str, str, dict[str, Any]], Any] = read_result) -> Any:
        """The result of `method`, read as the negotiated revision reads it."""
        assert self._session is not None
        version = self._version()
        if is_modern(version):
            params = {**(params or {}), "_meta": modern_meta(version, self._client_info)}
        raw = await self._session.request(method, params, timeout or self.read_timeout_seconds)
        return reader(method, version, raw)

    async def list_tools(self, *, cursor: str | None = None) -> mcp_types.ListToolsResult:
        # A first page equal as JSON to the last one is not read again (surface.RepeatedListing).
        page = await self._ask("tools/list", _paged(cursor), reader=read_result if cursor else self._listing.read)
        return self._schemas.absorb(page, modern=is_modern(self._version()),
                                    complete=cursor is None and page.next_cursor is None)

    async def list_prompts(self, *, cursor: str | None = None) -> mcp_types.ListPromptsResult:
        return await self._ask("prompts/list", _paged(cursor))

    async def list_resources(self, *, cursor: str | None = None) -> mcp_types.ListResourcesResult:
        return await self._ask("resources/list", _paged(cursor))

    async def list_resource_templates(self, *, cursor: str | None = None) -> mcp_types.ListResourceTemplatesResult:
        return await self._ask("resources/templates/list", _paged(cursor))

    async def call_tool(self, name: str, arguments: dict[str, Any] | None = None,
                        read_timeout_seconds: float | None = None) -> mcp_types.CallToolResult:
        """The tool's result, after the rounds a 2026-07-28 server may ask for (input_required, -32020)."""
        timeout = read_timeout_seconds or self.read_timeout_seconds
        result = await self._call_once(name, arguments, timeout, None)
        delay = FIRST_DELAY
        for _ in range(INPUT_ROUNDS):
            if not isinstance(result, mcp_types.InputRequiredResult):
                return result
            if result.input_requests:
                raise RpcError(_refusal(result.input_requests))
            await anyio.sleep(delay)
            delay = min(delay * 2, LAST_DELAY)
            result = await self._call_once(name, arguments, timeout, result.request_state)
        if not isinstance(result, mcp_types.InputRequiredResult):
            return result
        # The SDK's words up to the semicolon (call_send.SDK_REFUSALS); its advice to a caller is not ours.
        raise RuntimeError(f"Server returned InputRequiredResult for more than {INPUT_ROUNDS} rounds; the tool was "
                           f"called {INPUT_ROUNDS + 1} times")

    async def _call_once(self, name: str, arguments: dict[str, Any] | None, timeout: float,
                         state: str | None) -> mcp_types.CallToolResult | mcp_types.InputRequiredResult:
        try:
            result = await self._ask("tools/call", _call_params(name, arguments, state), timeout)
        except RpcError as mismatch:
            if mismatch.error.code != mcp_types.HEADER_MISMATCH or not is_modern(self._version()):
                raise
            try:
                with anyio.fail_after(timeout):
                    await self._relist_until(name)
            except (RpcError, TimeoutError, ValueError) as relist_error:
                raise mismatch from relist_error
            result = await self._ask("tools/call", _call_params(name, arguments, state), timeout)
        if isinstance(result, mcp_types.CallToolResult) and not result.is_error:
            if not self._schemas.knows(name):
                await self.list_tools()
            self._schemas.check(name, result)
        return result

    async def _relist_until(self, name: str) -> None:
        cursor: str | None = None
        for _ in range(_RELIST_PAGES):
            page = await self.list_tools(cursor=cursor)
            cursor = page.next_cursor
            if cursor is None or any(tool.name == name for tool in page.tools):
                return

    async def _notified(self, method: str, params: dict[str, Any] | None) -> None:
        notification = read_notification(method, self._version(), params)
        if notification is None or method == "notifications/cancelled" or self._handler is None:
            return
        await self._handler(notification)


def _paged(cursor: str | None) -> dict[str, Any] | None:
    return None if cursor is None else {"cursor": cursor}


def _call_params(name: str, arguments: dict[str, Any] | None, state: str | None) -> dict[str, Any]:
    params: dict[str, Any] = {} if state is None else {"requestState": state}
    params["name"] = name
    if arguments is not None:
        params["arguments"] = arguments
    return params


def _refusal(requests: dict[str, BaseModel]) -> mcp_types.ErrorData:
    """The refusal of the last input the server asks for (this client offers none; the SDK's refusals all finish
    at once, and the last one's is what it raises)."""
    method = next((getattr(request, "method", "") for request in reversed(list(requests.values()))), "")
    return mcp_types.ErrorData(code=mcp_types.INVALID_REQUEST, message=refusal(method))
