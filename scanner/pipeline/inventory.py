"""Talk MCP to the sandboxed server: negotiate, then list its tools (all pages), prompts and resources."""

from __future__ import annotations

import time
from dataclasses import dataclass
from collections.abc import Awaitable, Callable
from typing import Any

import anyio
from pydantic import ValidationError

from sandbox.core.engine import EngineTimeout
from sandbox.run.attach import AttachedStdio
from scanner.client.scan_client import ScanClient
from scanner.client.session import RpcError
from scanner.pipeline.client_identity import DEFAULT as CLIENT_IDENTITY
from scanner.pipeline.inventory_model import Inventory
from scanner.pipeline.pages import as_served, paginate
from scanner.pipeline.session_failures import error_answer, explain, first_leaf, is_handshake_refusal
from scanner.pipeline.timeouts import Timeouts
from scanner.pipeline.transport import WireHealth, attached_messages
from scanner.pipeline.wire_reader import problems


CONNECTING = "connecting (initialize)"
_SESSION_ERRORS = (TimeoutError, RpcError, anyio.EndOfStream, anyio.ClosedResourceError, anyio.BrokenResourceError,
                   ConnectionError)


# What ends the session with a recorded error: the server's misbehaviour, or an engine call of the probes (snapshot,
# top, restart) that did not answer in time.
RECORDED = (*_SESSION_ERRORS, EngineTimeout)

MessageHandler = Callable[[Any], Awaitable[None]]  # given each notification the server sent, as its model
# The client a session is held with, made given the handler of the server's notifications: the scanner's own over the
# sandbox's stdio (scan_client), the SDK's over a remote server's Streamable HTTP (scanner.pipeline.remote).
ClientFactory = Callable[[MessageHandler | None], Any]


@dataclass(frozen=True)
class AfterListing:
    """What `collect` runs in the session after listing (the probes), and the handler that sees the server's
    notifications (e.g. tools/list_changed) on that session: a client takes it only when it is made."""

    run: Callable[[Any, Inventory], Awaitable[None]]
    on_message: MessageHandler | None = None


async def collect(stdio: AttachedStdio, health: WireHealth, timeouts: Timeouts, started_at: float,
                  after_listing: AfterListing | None = None) -> Inventory:
    """Connect over the attached stdio and list everything the server offers, then run `after_listing` (the probes)
    in the same session. Never raises for server misbehaviour: what failed is in Inventory.errors."""
    async with stdio:
        return await collect_over(lambda handler: scan_client(stdio, health, timeouts.startup, handler), health,
                                  timeouts, started_at, after_listing)


def scan_client(stdio: AttachedStdio, health: WireHealth, read_timeout: float,
                message_handler: MessageHandler | None = None) -> ScanClient:
    """The scan's MCP client over the attached stdio: the SDK's `auto` negotiation (scanner.client.scan_client), as
    the default client identity (never the scanner's own name), every listing asked of the server."""
    return ScanClient(attached_messages(stdio, health), read_timeout=read_timeout,
                      client_info=CLIENT_IDENTITY.implementation(), message_handler=message_handler)


async def collect_over(connect: ClientFactory, health: WireHealth, timeouts: Timeouts, started_at: float,
                       after_listing: AfterListing | None = None,
                       recorded: tuple[type[BaseException], ...] = RECORDED,
                       answered: tuple[type[Exception], ...] = ()) -> Inventory:
    """`collect` with any MCP client `connect` makes (the scanner's own over the attached stdio, the SDK's over a
    remote server's Streamable HTTP); `recorded`: the exceptions that end the session with a recorded error instead
    of raising; `answered`: the client's exceptions for an error the server answered with, besides RpcError (the
    SDK's MCPError)."""
    inventory = Inventory()
    # timeouts.startup bounds every request, the handshake included; listing pages are bounded tighter below.
    client = connect(after_listing.on_message if after_listing is not None else None)
    step = CONNECTING
    try:
        async with client:
            inventory.connected = True
            inventory.first_answer_seconds = round(time.monotonic() - started_at, 3)
            inventory.server = _server_info(client)
            step = "listing"
            await _list_all(client, inventory, health, timeouts, started_at, (*_SESSION_ERRORS, *answered))
            inventory.listing_seconds = round(time.monotonic() - started_at - inventory.first_answer_seconds, 3)
            inventory.rejected_tools = list(health.rejected_tools)
            if health.rejected_count > len(health.rejected_tools):
                inventory.cuts.append(f"listing tools: {health.rejected_count - len(health.rejected_tools)} more "
                                      f"tools the MCP schema rejects (over {len(health.rejected_tools)}) were not "
                                      f"read, linted or called")
            if after_listing is not None and not inventory.errors:
                step = "probing"
                await after_listing.run(client, inventory)
    except Exception as exc:  # noqa: BLE001 - re-raised below unless _ended_by says the server ended the session
        ended = _ended_by(exc, step, (*recorded, *answered))
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


def _server_info(client: Any) -> dict[str, Any]:
    info = client.server_info
    capabilities = client.server_capabilities
    return {
        "name": info.name if info else None,
        "version": info.version if info else None,
        "protocol_version": client.protocol_version,
        "capabilities": as_served(capabilities) if capabilities else {},
        "instructions": client.instructions,
    }


async def _list_all(client: Any, inventory: Inventory, health: WireHealth, timeouts: Timeouts,
                    started_at: float, session_errors: tuple[type[Exception], ...]) -> None:
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
            cut = await paginate(method, attribute, sink, timeouts.request)
            if cut is not None:
                inventory.cuts.append(f"listing {label}: {cut}, linted or called")
        except session_errors as exc:
            inventory.errors.append(explain(f"listing {label}", exc, health, timeouts.request))
            if health.fault or error_answer(exc) is None:
                return
        except ValidationError as exc:  # the page is JSON-RPC, but not a valid MCP listing for the SDK's models
            inventory.errors.append(f"listing {label}: the answer does not match the MCP schema ({problems(exc)})")
        if label == "tools" and inventory.first_tools_list_seconds is None:
            inventory.first_tools_list_seconds = round(time.monotonic() - started_at, 3)
