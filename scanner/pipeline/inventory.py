"""Talk MCP to the sandboxed server: negotiate, then list its tools (all pages), prompts and resources."""

from __future__ import annotations

import time
from dataclasses import dataclass
from collections.abc import Awaitable, Callable
from typing import Any

import anyio
from pydantic import ValidationError
from mcp import Client
from mcp.client import IncomingMessage
from mcp.shared.exceptions import MCPError

from sandbox.core.engine import EngineTimeout
from sandbox.run.attach import AttachedStdio
from scanner.pipeline.client_identity import DEFAULT as CLIENT_IDENTITY
from scanner.pipeline.inventory_model import Inventory
from scanner.pipeline.pages import paginate
from scanner.pipeline.session_failures import explain, first_leaf, is_handshake_refusal
from scanner.pipeline.timeouts import Timeouts
from scanner.pipeline.transport import WireHealth, attached_transport
from scanner.pipeline.wire_reader import problems


CONNECTING = "connecting (initialize)"
_SESSION_ERRORS = (TimeoutError, MCPError, anyio.EndOfStream, anyio.ClosedResourceError, anyio.BrokenResourceError,
                   ConnectionError)


# What ends the session with a recorded error: the server's misbehaviour, or an engine call of the probes (snapshot,
# top, restart) that did not answer in time.
RECORDED = (*_SESSION_ERRORS, EngineTimeout)

MessageHandler = Callable[[IncomingMessage], Awaitable[None]]


@dataclass(frozen=True)
class AfterListing:
    """What `collect` runs in the session after listing (the probes), and the handler that sees the server's
    notifications (e.g. tools/list_changed) on that session: the SDK takes it only when the Client is made."""

    run: Callable[[Client, Inventory], Awaitable[None]]
    on_message: MessageHandler | None = None


async def collect(stdio: AttachedStdio, health: WireHealth, timeouts: Timeouts, started_at: float,
                  after_listing: AfterListing | None = None) -> Inventory:
    """Connect over the attached stdio and list everything the server offers, then run `after_listing` (the probes)
    in the same session. Never raises for server misbehaviour: what failed is in Inventory.errors."""
    async with stdio:
        return await collect_over(attached_transport(stdio, health), health, timeouts, started_at, after_listing)


def scan_client(transport: Any, read_timeout: float,
                message_handler: Callable[[IncomingMessage], Awaitable[None]] | None = None) -> Client:
    """The scan's MCP client over `transport`: the SDK's `auto` negotiation, no response cache (every listing is
    asked of the server), as the default client identity (never the scanner's own name)."""
    return Client(transport, mode="auto", read_timeout_seconds=read_timeout, client_info=CLIENT_IDENTITY.implementation(),
                  cache=None, message_handler=message_handler)


async def collect_over(transport: Any, health: WireHealth, timeouts: Timeouts, started_at: float,
                       after_listing: AfterListing | None = None,
                       recorded: tuple[type[BaseException], ...] = RECORDED) -> Inventory:
    """`collect` over any MCP transport (the attached stdio's, or a remote server's Streamable HTTP); `recorded`:
    the exceptions that end the session with a recorded error instead of raising."""
    inventory = Inventory()
    # timeouts.startup bounds every request, the handshake included; listing pages are bounded tighter below.
    client = scan_client(transport, timeouts.startup, after_listing.on_message if after_listing is not None else None)
    step = CONNECTING
    try:
        async with client:
            inventory.connected = True
            inventory.first_answer_seconds = round(time.monotonic() - started_at, 3)
            inventory.server = _server_info(client)
            step = "listing"
            await _list_all(client, inventory, health, timeouts, started_at)
            inventory.listing_seconds = round(time.monotonic() - started_at - inventory.first_answer_seconds, 3)
            inventory.rejected_tools = list(health.rejected_tools)
            if after_listing is not None and not inventory.errors:
                step = "probing"
                await after_listing.run(client, inventory)
    except Exception as exc:  # noqa: BLE001 - re-raised below unless _ended_by says the server ended the session
        ended = _ended_by(exc, step, recorded)
        if ended is None:
            raise
        inventory.errors.append(explain(step, ended, health, timeouts.startup))
    if health.fault and not any(health.fault in error for error in inventory.errors):
        # The stream ended early (a flood, a line over the bound) while the probes ran: they saw only a closed
        # connection, the reason is here.
        inventory.errors.append(f"{step}: {health.fault}")
    return inventory


def _ended_by(exc: Exception, step: str, recorded: tuple[type[BaseException], ...]) -> BaseException | None:
    """What ended the session, when it is to be recorded (None: a scanner bug, to fail the scan): one of `recorded`,
    or while connecting the client's refusal of the server's handshake answer (a hostile or broken server must not
    fail the scan); through the SDK's task groups, the first of their leaves when every leaf is such."""
    def records(leaf: BaseException) -> bool:
        return isinstance(leaf, recorded) or (step == CONNECTING and is_handshake_refusal(leaf))

    if not isinstance(exc, ExceptionGroup):
        return exc if records(exc) else None
    matched, rest = exc.split(lambda leaf: not isinstance(leaf, BaseExceptionGroup) and records(leaf))
    return first_leaf(matched) if rest is None and matched is not None else None


def _server_info(client: Client) -> dict[str, Any]:
    info = client.server_info
    capabilities = client.server_capabilities
    return {
        "name": info.name if info else None,
        "version": info.version if info else None,
        "protocol_version": client.protocol_version,
        "capabilities": capabilities.model_dump(mode="json", by_alias=True, exclude_none=True) if capabilities else {},
        "instructions": client.instructions,
    }


async def _list_all(client: Client, inventory: Inventory, health: WireHealth, timeouts: Timeouts,
                    started_at: float) -> None:
    capabilities = inventory.server.get("capabilities") or {}
    listings = [("tools", "tools", client.list_tools, inventory.tools)]
    if "prompts" in capabilities:
        listings.append(("prompts", "prompts", client.list_prompts, inventory.prompts))
    if "resources" in capabilities:
        listings.append(("resources", "resources", client.list_resources, inventory.resources))
        listings.append(
            ("resources/templates", "resource_templates", client.list_resource_templates, inventory.resource_templates)
        )
    for label, attribute, method, sink in listings:
        try:
            await paginate(method, attribute, sink, timeouts.request)
        except _SESSION_ERRORS as exc:
            inventory.errors.append(explain(f"listing {label}", exc, health, timeouts.request))
            if health.fault or not isinstance(exc, MCPError):
                return
        except ValidationError as exc:  # the page is JSON-RPC, but not a valid MCP listing for the SDK's models
            inventory.errors.append(f"listing {label}: the answer does not match the MCP schema ({problems(exc)})")
        if label == "tools" and inventory.first_tools_list_seconds is None:
            inventory.first_tools_list_seconds = round(time.monotonic() - started_at, 3)
