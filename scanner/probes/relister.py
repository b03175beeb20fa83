"""P8's re-lists during one probe phase: when each is due (relist_cadence), fetching every page (relist_tools), what a
fetch found applied to the tools in use, and which re-lists failed.

A re-list that fails leaves P8 unchecked for the calls it followed: a server can refuse tools/list once its
definitions changed, and a scan that said nothing would read as checked and clean. So each failure is counted and
the phase ends with one error line naming the first, which leaves the scan incomplete (scanner.pipeline.outcome).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from scanner.probes.relist_cadence import RelistCadence, relist_every
from scanner.probes.relist_tools import DumpedPage, Tools, apply_relisted, fetch_tools
from scanner.report.model import Finding


@dataclass
class Relister:
    """The re-lists of one probe phase; `findings` and `errors` are the phase's own lists."""

    findings: list[Finding]
    errors: list[str]
    cadence: RelistCadence = field(default_factory=RelistCadence)
    first_page: DumpedPage = field(default_factory=DumpedPage)
    failed: list[tuple[str, str]] = field(default_factory=list)  # the re-lists that failed: after which call, why
    _why: list[str] = field(default_factory=list)  # why the last fetch failed (fetch_tools says it)

    def beside_every_call(self, tools: int) -> bool:
        """Whether a listing of `tools` tools is re-listed after every call (then fetched beside the call's looks)."""
        return relist_every(tools) == 1

    def last(self, notifications: int) -> str:
        """The `after_call` text of the re-list made once probing ended (after the last call's exit window): the
        calls not re-listed yet, else "the probes ended" (a change the server made after the last call's own re-list,
        on a timer or in a thread its answer left running, is seen if it came by then)."""
        return self.cadence.pending(notifications) or "the probes ended"

    async def fetch(self, client: Any, request_timeout: float) -> Tools | None:
        self._why = []  # one fetch at a time: the next `apply` (or a drop) follows it before another begins
        return await fetch_tools(client, request_timeout, self.first_page, self._why)

    def apply(self, current: Tools, fetched: Tools | None, *, after_call: str) -> Tools:
        """The tools in use after a re-list that fetched `fetched` (None: it failed, and is counted)."""
        if fetched is None:
            self.failed.append((after_call, self._why[0] if self._why else ""))
            return current
        return apply_relisted(current, fetched, self.findings, after_call=after_call)

    def finish(self) -> None:
        """The phase's error line for the re-lists that failed, if any."""
        if not self.failed:
            return
        after, why = self.failed[0]
        self.errors.append(f"the tools could not be re-listed after {len(self.failed)} of the probes (the first after "
                           f"{after}{': ' + why if why else ''}); a definition change they made would not be seen "
                           "(P8)"[:600])
