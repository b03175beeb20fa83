"""The conformance probe's sequence on a fresh server, as a 2026-07-28 client would start (no initialize):

1. tools/list with the per-request _meta (protocol version, client info, capabilities) as the very first message;
2. only if that got no tools: initialize (2025-11-25) and notifications/initialized, to tell a server that needs the
   handshake from one that is not answering at all (the later requests then run on that connection);
3. server/discover; resources/read of a URI no server has (a server offering resources);
4. with --spec: the other lists its capabilities offer, tools/list declaring protocol version 2099-01-01, ping, and a
   quiet window in which what the server sends unasked is counted.

Every request carries the 2026-07-28 _meta. What was seen is returned as `Observed`; nothing here judges it. The
sequence runs over any `Wire`: the raw stdio of a fresh server (`observe`), or Streamable HTTP POSTs to a remote
endpoint (scanner/conformance/http_probe.py), where there is no standing stream and so no quiet window."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Protocol

from sandbox.run.attach import AttachedStdio
from scanner.conformance.model import CURRENT_REVISION, NEXT_REVISION, Answer, Observed
from scanner.conformance.wire import RawWire

QUIET_WINDOW_SECONDS = 3.0
MISSING_RESOURCE = "mcp-sandbox-probe://conformance/no-such-resource"
BOGUS_VERSION = "2099-01-01"
LISTS = (("prompts", "prompts/list"), ("resources", "resources/list"), ("resources", "resources/templates/list"))
PROTOCOL_VERSION_KEY = "io.modelcontextprotocol/protocolVersion"
CLIENT_INFO_KEY = "io.modelcontextprotocol/clientInfo"
CLIENT_CAPABILITIES_KEY = "io.modelcontextprotocol/clientCapabilities"


@dataclass(frozen=True)
class ProbePlan:
    full: bool
    client_info: dict[str, str]  # the identity the first session presented (never the scanner's own name)
    capabilities: dict[str, Any]  # the server's, from the first session's listing
    first_timeout: float  # the first request: the server is still starting
    timeout: float
    first_session_notifications: tuple[str, ...] = ()
    quiet_seconds: float = QUIET_WINDOW_SECONDS  # the --spec window for what the server sends unasked


class Wire(Protocol):
    """What the sequence needs of a connection: requests, a notification, a quiet wait, what came unasked."""

    unasked: list[str]

    async def request(self, method: str, params: dict[str, Any], timeout: float) -> Answer: ...

    async def notify(self, method: str, params: dict[str, Any] | None = None) -> None: ...

    async def quiet(self, seconds: float) -> None: ...


def request_meta(plan: ProbePlan, version: str = NEXT_REVISION) -> dict[str, Any]:
    return {PROTOCOL_VERSION_KEY: version, CLIENT_INFO_KEY: plan.client_info, CLIENT_CAPABILITIES_KEY: {}}


async def observe(stdio: AttachedStdio, plan: ProbePlan) -> tuple[Observed, list[str]]:
    """Run the sequence over `stdio` (entered here); what was seen, and the wire log."""
    observed = Observed(full=plan.full, capabilities=plan.capabilities,
                        first_session_notifications=list(plan.first_session_notifications))
    async with stdio, RawWire(stdio) as wire:
        await run_sequence(wire, plan, observed)
        if observed.first is not None and observed.first.request_id is not None:
            observed.late_first = wire.late.get(observed.first.request_id)
        observed.wire = wire.health.problems()
        return observed, wire.log


async def run_sequence(wire: Wire, plan: ProbePlan, observed: Observed) -> None:
    """The shared sequence over `wire`, filling `observed`."""
    await _first_contact(wire, plan, observed)
    meta = {"_meta": request_meta(plan)}
    observed.discover = await wire.request("server/discover", dict(meta), plan.timeout)
    if "resources" in plan.capabilities:
        observed.resource_read = await wire.request("resources/read", {"uri": MISSING_RESOURCE, **meta},
                                                    plan.timeout)
    if plan.full:
        await _full_suite(wire, plan, observed)
    observed.unasked = list(wire.unasked)


async def _first_contact(wire: Wire, plan: ProbePlan, observed: Observed) -> None:
    observed.first = await wire.request("tools/list", {"_meta": request_meta(plan)}, plan.first_timeout)
    result = observed.first.result_dict()
    if result is not None and isinstance(result.get("tools"), list):
        return
    params = {"protocolVersion": CURRENT_REVISION, "capabilities": {}, "clientInfo": plan.client_info}
    observed.handshake = await wire.request("initialize", params, plan.first_timeout)
    if observed.handshake.result_dict() is not None:
        await wire.notify("notifications/initialized")


async def _full_suite(wire: Wire, plan: ProbePlan, observed: Observed) -> None:
    meta = {"_meta": request_meta(plan)}
    for capability, method in LISTS:
        if capability in plan.capabilities:
            observed.lists[method] = await wire.request(method, dict(meta), plan.timeout)
    observed.bogus_version = await wire.request("tools/list", {"_meta": request_meta(plan, BOGUS_VERSION)},
                                                plan.timeout)
    observed.ping = await wire.request("ping", dict(meta), plan.timeout)
    if plan.quiet_seconds > 0:
        await wire.quiet(plan.quiet_seconds)
    observed.window_seconds = plan.quiet_seconds
