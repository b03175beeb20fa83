"""The probe runner's re-list (P8): fetch every page of tools/list, then compare it with the tools in use.

The two are apart so the fetch can run beside the looks after a call (scanner.probes.call_looks): they have no order
between them. The looks read the sandbox (engine, observer, sink), the fetch asks the server over the MCP session,
and what the server does while it answers lies in the same call's window either way (the files it changes are in
this look or the next; its egress goes to the window its sink stamp falls in). What the fetch found is applied
only after the looks, also when they end in a restart: it was read from the server before it was replaced
(scanner.probes.relister).

Definitions are compared whole (P8, scanner.rules.probe): a change past the size the report keeps of a string is a
change too.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import anyio

from scanner.pipeline.pages import PageBound, as_served
from scanner.report.model import Finding
from scanner.rules.probe import definition_change_findings

Tools = list[dict[str, Any]]


@dataclass
class DumpedPage:
    """The last first page a re-list fetched and its tools as wire dicts. The client returns the very page it read
    before when the server repeats its JSON (scanner.client.surface.RepeatedListing); such a page is not dumped
    again (about 0.04 s of CPU for 3,000 tools). Each fetch gets its own list of the same dicts."""

    page: Any = None
    tools: Tools = field(default_factory=list)

    def tools_of(self, page: Any) -> Tools:
        if page is not self.page:
            self.page, self.tools = page, [_wire(item) for item in page.tools]
        return list(self.tools)


async def fetch_tools(client: Any, request_timeout: float, first: DumpedPage | None = None,
                      why: list[str] | None = None) -> Tools | None:
    """Every page of tools/list (within the first listing's PageBound), as wire dicts; None when the listing failed
    (a failed re-list is not a finding by itself: `why` gets the reason, one line, for the report to say P8 went
    unchecked then). `first`: the first page's dump kept from the last fetch."""
    tools: Tools = []
    bound = PageBound()  # the first listing's bound: a re-list reads the same part of a listing cut there
    try:
        cursor: str | None = None
        while True:
            with anyio.fail_after(request_timeout):
                page = await (client.list_tools(cursor=cursor) if cursor else client.list_tools())
            dumped = first.tools_of(page) if first is not None and not cursor else [_wire(item) for item in page.tools]
            tools.extend(bound.kept(dumped))
            cursor = bound.next_cursor(page.next_cursor)
            if cursor is None:
                break
    except Exception as exc:  # noqa: BLE001 - a failed re-list is not a finding by itself; `why` says it
        if why is not None:
            why.append(" ".join(f"{type(exc).__name__}: {exc}".split())[:200])
        return None
    return tools


def _wire(tool: Any) -> dict[str, Any]:
    return as_served(tool)  # as the first listing dumps it: a schema too deep to serialize kept as parsed


def apply_relisted(current: Tools, fetched: Tools | None, findings: list[Finding], *, after_call: str) -> Tools:
    """The tools in use after a re-list that fetched `fetched`: P8 findings for what changed (each once per scan)
    added to `findings`; `current` when nothing was fetched or nothing changed."""
    if fetched is None or fetched == current:
        return current  # unchanged (a plain comparison: the capped one below costs more on a big listing)
    changes = definition_change_findings(current, fetched, after_call=after_call)
    if not changes:
        return current
    seen = {(f.tool, f.message) for f in findings}
    findings.extend(f for f in changes if (f.tool, f.message) not in seen)
    return fetched
