"""The conformance probe of a remote Streamable HTTP target (`scan --url`): the shared sequence (probe.py) over POSTs
to the endpoint, then, with --spec, what only HTTP shows:

1. two tools/list requests whose routing headers are wrong (Mcp-Method naming prompts/list; no Mcp-Method);
2. the OAuth metadata lookups and the legacy HTTP+SSE sniffs (http_discovery.py), GETs on the endpoint's origin.

There is no fresh server (the target is someone's live service, already listed and probed): the first request is the
first of a new, stateless exchange, which is what a 2026-07-28 client sends. Read-only: lists, discover, a read of a
URI no server has, GETs; never tools/call (`HttpWire.request` refuses it). What was seen is returned as `Observed`."""

from __future__ import annotations

import httpx2

from scanner.conformance.http_discovery import discover_auth, sniff_legacy_sse
from scanner.conformance.http_wire import HttpWire
from scanner.conformance.model import HttpObserved, Observed
from scanner.conformance.probe import ProbePlan, request_meta, run_sequence


async def observe_http(client: httpx2.AsyncClient, url: str, plan: ProbePlan) -> tuple[Observed, list[str]]:
    """Run the sequence against the endpoint at `url` through `client` (its headers, its TLS settings)."""
    observed = Observed(full=plan.full, capabilities=plan.capabilities, transport="http",
                        first_session_notifications=list(plan.first_session_notifications))
    wire = HttpWire(client, url)
    try:
        await run_sequence(wire, plan, observed)
        if plan.full:
            observed.http = await _http_only(wire, client, httpx2.URL(url), plan)
    finally:
        await wire.close()
    observed.unasked = list(wire.unasked)
    return observed, wire.log


async def _http_only(wire: HttpWire, client: httpx2.AsyncClient, endpoint: httpx2.URL, plan: ProbePlan) -> HttpObserved:
    out = HttpObserved()
    meta = {"_meta": request_meta(plan)}
    out.header_mismatch = await wire.request("tools/list", dict(meta), plan.timeout,
                                             routing={"Mcp-Method": "prompts/list"})
    out.header_missing = await wire.request("tools/list", dict(meta), plan.timeout, routing={"Mcp-Method": None})
    await discover_auth(client, endpoint, plan.timeout, out)
    await sniff_legacy_sse(client, endpoint, out)
    return out
