"""How the scan's client settles the protocol era with a server, as the MCP SDK's `Client(mode="auto")` does
(docs/own-client.md §1): `server/discover` at 2026-07-28 first (10 s, never cancelled); a server that answers with a
modern version is a 2026-07-28 session, anything else that is not positive evidence of one (an error, an unreadable
answer, no modern version offered) falls back to the `initialize` handshake; -32022 naming a modern version asks
again once at that version, naming only versions this client does not know ends the connection."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

import mcp_types
from mcp_types.version import (HANDSHAKE_PROTOCOL_VERSIONS, LATEST_HANDSHAKE_VERSION, LATEST_MODERN_VERSION,
                               MODERN_PROTOCOL_VERSIONS)
from pydantic import ValidationError

from scanner.client.session import RpcError, RpcSession
from scanner.client.surface import HANDSHAKE_ERA_DEFAULT, read_result, ttl_floored

DISCOVER_SECONDS = 10.0  # the SDK's fixed bound on server/discover, whatever the read timeout


@dataclass(frozen=True)
class Negotiated:
    """What the session settled on: the version, and who the server says it is."""

    protocol_version: str
    server_info: mcp_types.Implementation | None
    capabilities: mcp_types.ServerCapabilities | None
    instructions: str | None


def modern_meta(version: str, client_info: mcp_types.Implementation) -> dict[str, Any]:
    """The `_meta` a 2026-07-28 client stamps on every request it sends."""
    return {mcp_types.PROTOCOL_VERSION_META_KEY: version,
            mcp_types.CLIENT_INFO_META_KEY: client_info.model_dump(mode="json", by_alias=True, exclude_none=True),
            mcp_types.CLIENT_CAPABILITIES_META_KEY: {}}


async def negotiate(session: RpcSession, client_info: mcp_types.Implementation, timeout: float,
                    settled: Callable[[Negotiated], None] = lambda _: None) -> Negotiated:
    """The era negotiation; RpcError (the server's refusal, and with the session's `sdk_codes` its own timeout and a
    closed connection), RuntimeError or ValidationError (an answer the client refuses). `settled` is told the
    outcome as soon as it is known, before `notifications/initialized` is sent: what the server sends from then on is
    read at the negotiated version."""
    version = LATEST_MODERN_VERSION
    for attempt in range(2):
        try:
            raw = await session.request("server/discover", {"_meta": modern_meta(version, client_info)},
                                        DISCOVER_SECONDS, cancel=False)
        except RpcError as exc:
            supported = _supported(exc)
            mutual = _modern(supported or ())
            if exc.error.code == mcp_types.UNSUPPORTED_PROTOCOL_VERSION:
                if mutual and attempt == 0:
                    version = mutual[-1]
                    continue
                if supported is not None and not any(v in HANDSHAKE_PROTOCOL_VERSIONS for v in supported):
                    raise
            try:
                return await initialize(session, client_info, timeout, settled)
            except RpcError as handshake:
                mutual = _modern(_supported(handshake) or ())
                if handshake.error.code != mcp_types.UNSUPPORTED_PROTOCOL_VERSION or attempt != 0 or not mutual:
                    raise
                version = mutual[-1]
                continue
        return await _adopted(session, raw, client_info, timeout, settled)
    raise AssertionError("unreachable")  # every round returns, raises or asks again once


async def _adopted(session: RpcSession, raw: dict[str, Any], client_info: mcp_types.Implementation,
                   timeout: float, settled: Callable[[Negotiated], None]) -> Negotiated:
    """A discover answer: a 2026-07-28 session when it offers a modern version, else the handshake."""
    try:
        result = mcp_types.DiscoverResult.model_validate(ttl_floored(raw))
    except ValidationError:
        return await initialize(session, client_info, timeout, settled)
    mutual = _modern(result.supported_versions)
    if not mutual:
        return await initialize(session, client_info, timeout, settled)
    negotiated = Negotiated(protocol_version=mutual[-1], server_info=_stamped_identity(result),
                            capabilities=result.capabilities, instructions=result.instructions)
    settled(negotiated)
    return negotiated


async def initialize(session: RpcSession, client_info: mcp_types.Implementation, timeout: float,
                     settled: Callable[[Negotiated], None]) -> Negotiated:
    params = mcp_types.InitializeRequestParams(protocol_version=LATEST_HANDSHAKE_VERSION,
                                               capabilities=mcp_types.ClientCapabilities(), client_info=client_info)
    raw = await session.request("initialize", params.model_dump(mode="json", by_alias=True, exclude_none=True),
                                timeout, cancel=False)
    result: mcp_types.InitializeResult = read_result("initialize", HANDSHAKE_ERA_DEFAULT, raw)
    if result.protocol_version not in HANDSHAKE_PROTOCOL_VERSIONS:
        raise RuntimeError(f"Unsupported protocol version from the server: {result.protocol_version}")
    negotiated = Negotiated(protocol_version=result.protocol_version, server_info=result.server_info,
                            capabilities=result.capabilities, instructions=result.instructions)
    settled(negotiated)
    await session.notify("notifications/initialized", timeout=timeout)
    return negotiated


def _modern(versions: Sequence[str]) -> list[str]:
    """The modern versions both sides know, oldest first."""
    return [version for version in MODERN_PROTOCOL_VERSIONS if version in versions]


def _supported(exc: RpcError) -> list[str] | None:
    """The versions a -32022 error names, or None when its data is not that error's."""
    try:
        return mcp_types.UnsupportedProtocolVersionErrorData.model_validate(exc.error.data).supported
    except ValidationError:
        return None


def _stamped_identity(result: mcp_types.DiscoverResult) -> mcp_types.Implementation | None:
    """The server's identity from the discover answer's `_meta` stamp (display only: malformed reads as None)."""
    stamp = (result.meta or {}).get(mcp_types.SERVER_INFO_META_KEY)
    if stamp is None:
        return None
    try:
        return mcp_types.Implementation.model_validate(stamp)
    except ValidationError:
        return None
