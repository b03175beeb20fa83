"""A handshake-era MCP client over an RpcSession: `initialize` at a chosen protocol version with a client identity,
`notifications/initialized`, then listing requests, each result validated by mcp_types' model (pydantic's
ValidationError when it does not match) after what the SDK's client does first to a result of a handshake-era
session (docs/own-client.md §2): the fields only the 2026-07-28 revision defines (LATER_FIELDS) dropped, so a result
the SDK accepts (`"ttlMs": -5`, `"cacheScope": "bogus"`) is accepted here too. The SDK's per-revision check is not
run: a result it rejects for that alone (docs/own-client.md §2, "The surface check") is accepted here."""

from __future__ import annotations

from typing import Any

import mcp_types
from mcp_types.version import HANDSHAKE_PROTOCOL_VERSIONS

from sandbox.core.untrusted import cap_text
from scanner.client.session import RpcSession
from scanner.client.surface import LATER_FIELDS as LATER_BY_METHOD


LATER_FIELDS = LATER_BY_METHOD["tools/list"]  # a 2026-07-28 result's; outside a handshake-era contract


class UnsupportedVersion(Exception):
    """The server answered initialize with a protocol version the handshake does not negotiate."""


class HandshakeClient:
    def __init__(self, session: RpcSession, *, read_timeout: float, client_info: mcp_types.Implementation,
                 page_timeout: float | None = None) -> None:
        self._session = session
        self._read_timeout = read_timeout
        self._page_timeout = page_timeout if page_timeout is not None else read_timeout
        self._client_info = client_info
        self.initialized: mcp_types.InitializeResult | None = None

    async def initialize(self, protocol_version: str) -> mcp_types.InitializeResult:
        """The handshake as a client of that era sends it: `initialize` offering `protocol_version`, with no
        capabilities, then `notifications/initialized` once the server answered with a version of the handshake."""
        params = mcp_types.InitializeRequestParams(protocol_version=protocol_version,
                                                   capabilities=mcp_types.ClientCapabilities(),
                                                   client_info=self._client_info)
        raw = await self._session.request("initialize", params.model_dump(mode="json", by_alias=True, exclude_none=True),
                                          self._read_timeout)
        result = mcp_types.InitializeResult.model_validate(_handshake_era(raw), by_name=False)
        if result.protocol_version not in HANDSHAKE_PROTOCOL_VERSIONS:
            raise UnsupportedVersion(f"the server answered with protocol version "
                                     f"{cap_text(result.protocol_version, 40)!r}, which no initialize handshake "
                                     "negotiates")
        self.initialized = result
        await self._session.notify("notifications/initialized", timeout=self._read_timeout)
        return result

    async def list_tools(self, cursor: str | None = None) -> mcp_types.ListToolsResult:
        raw = await self._session.request("tools/list", {"cursor": cursor} if cursor else None, self._page_timeout)
        return mcp_types.ListToolsResult.model_validate(_handshake_era(raw), by_name=False)

    @property
    def protocol_version(self) -> str | None:
        return self.initialized.protocol_version if self.initialized is not None else None

    @property
    def instructions(self) -> str | None:
        return self.initialized.instructions if self.initialized is not None else None


def _handshake_era(raw: dict[str, Any]) -> dict[str, Any]:
    """The result as a handshake-era session reads it: LATER_FIELDS dropped."""
    return {key: value for key, value in raw.items() if key not in LATER_FIELDS}

