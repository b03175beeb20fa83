"""Stage: conformance to a protocol revision (scanner/conformance; docs/conformance.md).

json-schema-dialect reads the tools the first session listed, in every scan. With --spec-version or --spec
2026-07-28 a fresh server is started from the installed image (`fresh_server.fresh_server`: same command, policy,
workspace and canaries, removed right after), so that the probe's first request is the server's first message, and
the probe (scanner/conformance/probe.py) talks raw JSON-RPC to it. What the fresh server tried on the network is
B2 like the rest of the scan's, for hosts not reported already.

A remote target (`scan --url`, `check_remote_conformance`) has no fresh server: the probe talks to the live endpoint
over Streamable HTTP (scanner/conformance/http_probe.py, read-only, the endpoint's origin only, through the scan's
HTTP client with its headers), and with --spec adds the HTTP-only checks W14-W17.

A check whose answer is unclear is a record (inconclusive), never a finding; a fresh server that could not be
started, exited, or answered nothing (a remote one whose connection failed, or that answered nothing) makes
`Conformance.problem`, which the outcome turns into Skipped("conformance", reason): the scan is incomplete, never
silently clean. What went wrong on the fresh server's wire short of that (stdout lines that are not JSON-RPC, answers
to no request in flight) is said in the report's errors, as the first session's is.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

import anyio

from sandbox.core.session import SandboxSession
from sandbox.core.untrusted import cap_text, decode_bytes
from sandbox.run.attach import AttachedStdio
from scanner.conformance.checks import conclude, dialect_findings, not_run
from scanner.conformance.model import ConformanceOptions, ConformanceReport, Observed
from scanner.pipeline.client_identity import DEFAULT as CLIENT_IDENTITY
from scanner.pipeline.inventory_model import Inventory
from scanner.pipeline.timeouts import Timeouts
from scanner.pipeline.fresh_server import FreshServerError, fresh_server
from scanner.pipeline.scan_options import Progress
from scanner.pipeline.server_start import StartedServer
from scanner.report.model import Finding
from scanner.rules.egress import egress_findings, new_hosts

if TYPE_CHECKING:  # the wire probes are imported where they run (--spec-version/--spec, --url): a default scan
    # checks the dialect of the tools it listed and no more
    import httpx2

    from scanner.conformance.probe import ProbePlan

MIN_TIMEOUT = 10.0
MAX_PROBLEM_CHARS = 400
DURING = "outside any probe call, while a fresh server answered the conformance probe"


@dataclass(frozen=True)
class Conformance:
    report: ConformanceReport
    findings: list[Finding] = field(default_factory=list)
    egress: list[Finding] = field(default_factory=list)  # B2 of the fresh server
    problem: str | None = None  # why the probe could not finish (the scan is then incomplete)
    wire: list[str] = field(default_factory=list)  # what went wrong on the fresh server's wire (the report's errors)


def check_conformance(session: SandboxSession, started: StartedServer, inventory: Inventory,
                      options: ConformanceOptions, timeouts: Timeouts, progress: Progress, *,
                      reported: list[dict[str, Any]], notifications: list[str]) -> Conformance:
    """json-schema-dialect always; the wire probe on a fresh server when the options name a later revision."""
    findings, dialect = dialect_findings(inventory.tools, options)
    report = ConformanceReport(spec_version=options.spec_version, full=options.full, checks=[dialect])
    if not options.probes_wire:
        return Conformance(report=report, findings=findings)
    from scanner.conformance.probe import observe

    progress(f"checking conformance to {options.spec_version} on a fresh server")
    plan = _plan(inventory, options, timeouts, notifications)
    try:
        with fresh_server(session, started, "a fresh server for the conformance probe") as server:
            stdio = AttachedStdio(server.socket, stderr=server.stderr)
            observed, report.exchange = anyio.run(observe, stdio, plan)
            stderr = decode_bytes(bytes(stdio.stderr.data))[0]
    except FreshServerError as exc:
        report.checks += not_run(options, str(exc))
        return Conformance(report=report, findings=findings, problem=_cap(str(exc)))
    wire_findings, records = conclude(observed)
    report.checks += records
    egress = []
    if started.drain is not None:
        drained = started.drain(started.server.container_id, settled=True)
        egress = egress_findings(new_hosts(drained, reported), during=DURING)
    return Conformance(report=report, findings=[*findings, *wire_findings], egress=egress,
                       problem=dead_server(observed, stderr),
                       wire=[f"the conformance probe's fresh server: {line}" for line in observed.wire])


def check_remote_conformance(connect: Callable[[], httpx2.AsyncClient], url: str, inventory: Inventory,
                             options: ConformanceOptions, timeouts: Timeouts, progress: Progress) -> Conformance:
    """json-schema-dialect always; with a later revision, the wire probe over Streamable HTTP to the live endpoint
    (`connect` makes the scan's HTTP client: its headers, TLS and proxy settings, no redirects of its own)."""
    findings, dialect = dialect_findings(inventory.tools, options)
    report = ConformanceReport(spec_version=options.spec_version, full=options.full, checks=[dialect])
    if not options.probes_wire:
        return Conformance(report=report, findings=findings)
    from scanner.conformance.http_probe import observe_http

    progress(f"checking conformance to {options.spec_version} over Streamable HTTP")
    plan = _plan(inventory, options, timeouts, [], remote=True)

    async def probe() -> tuple[Observed, list[str]]:
        async with connect() as client:
            return await observe_http(client, url, plan)

    observed, report.exchange = anyio.run(probe)
    wire_findings, records = conclude(observed)
    report.checks += records
    return Conformance(report=report, findings=[*findings, *wire_findings], problem=dead_server(observed, ""))


def dead_server(observed: Observed, stderr: str) -> str | None:
    """Why the fresh (or remote) server's answers are not evidence: it closed stdout (its connection failed) before
    the probe was done, or answered neither the stateless first request nor initialize."""
    tail = " ".join(stderr.split()[-30:])
    which = "the remote server" if observed.transport == "http" else "the fresh server"
    if observed.cut_short:
        what = "could not be reached (a request failed, or got HTTP 429, 502, 503 or 504)" \
            if observed.transport == "http" else "closed stdout (exited)"
        return _cap(f"{which} {what} during the conformance probe" + (f"; its stderr ended: {tail}" if tail else ""))
    if observed.first is not None and not observed.first.answered and observed.handshake is not None \
            and not observed.handshake.answered:
        return _cap(f"{which} answered neither a stateless tools/list nor initialize within "
                    f"{observed.first.seconds:g} s each")
    return None


def _plan(inventory: Inventory, options: ConformanceOptions, timeouts: Timeouts,
          notifications: list[str], *, remote: bool = False) -> ProbePlan:
    """The first request waits as long as the first session took to list, three times over (the server starts
    again), at least MIN_TIMEOUT and at most the start-up timeout; the others the request timeout, capped alike. A
    remote server is already running (no start-up to wait for) and has no standing stream (no quiet window)."""
    from scanner.conformance.probe import ProbePlan

    listed = inventory.first_tools_list_seconds or 0.0
    first = min(max(MIN_TIMEOUT, 3 * listed), timeouts.startup)
    identity = CLIENT_IDENTITY.implementation()
    capabilities = inventory.server.get("capabilities") or {}
    return ProbePlan(full=options.full, client_info={"name": identity.name, "version": identity.version},
                     capabilities=capabilities if isinstance(capabilities, dict) else {}, first_timeout=first,
                     timeout=min(MIN_TIMEOUT, timeouts.request),
                     first_session_notifications=tuple(notifications),
                     **({"quiet_seconds": 0.0} if remote else {}))


def _cap(text: str) -> str:
    return cap_text(" ".join(text.split()), MAX_PROBLEM_CHARS)
