"""The probe phase as the scan sees it: three calls.

    plan = prepare(probe_options, run_policy)          # canaries + workspace seed; the policy gains the canary env
    server = run.start_server(..., plan.policy)
    hook, holder = make_after_listing(session, server, plan, restart, timeouts=..., progress=...)
    inventory = anyio.run(collect, ..., hook)           # probes run in the same MCP session, after listing
    phase_report = summarize(holder)                    # probes, behaviour, P1–P11 and B1–B7; probe waste

`restart` starts a fresh server from the installed image with `plan.policy` (used when the server crashed or hung).
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from functools import partial
from typing import TYPE_CHECKING, Any

import anyio

from sandbox.run.seeding import Seeded
from sandbox.run.server import RunningServer
from sandbox.core.session import SandboxSession
from scanner.pipeline.inventory import AfterListing, Inventory
from scanner.pipeline.transport import WireHealth
from scanner.probes.egress_drain import Drain
from scanner.probes.options import ProbeOptions
from scanner.probes.run_plan import ProbePlan, prepare  # noqa: F401 - the phase's first call (see above)
from scanner.report.model import CallBehavior, CanaryEvent, Finding, NotificationSeen

if TYPE_CHECKING:
    from scanner.probes.model import ProbeResult
    from scanner.probes.runner_io import ProbeOutcome

# The runner, its looks and the probe and behaviour rules are imported only when probes run (`make_after_listing`,
# `summarize`): a `--no-probes` scan, and a remote one that calls nothing, never load them.

Progress = Callable[[str], None]


@dataclass
class ProbePhaseResult:
    options: ProbeOptions
    cpus: float = 1.0
    outcome: ProbeOutcome | None = None
    tools: list[dict[str, Any]] = field(default_factory=list)  # as served at listing (uncapped), for the score
    configured: tuple[str, ...] = ()  # paths the user's --env named: where the server may keep its own state (B1)
    seeded: frozenset[str] = frozenset()  # every path the seed planted (canaries, workspace): the user's data (B1)
    errors: list[str] = field(default_factory=list)
    listing_canaries: list[CanaryEvent] = field(default_factory=list)  # planted secrets the listing carried (B3)


@dataclass(frozen=True)
class ProbePhaseReport:
    """What the probe phase adds to the report (`summarize`); empty when probing was off or never ran."""

    probes: list[ProbeResult] = field(default_factory=list)
    behavior: list[CallBehavior] = field(default_factory=list)
    findings: list[Finding] = field(default_factory=list)
    errors: list[str] = field(default_factory=list)
    notifications: list[NotificationSeen] = field(default_factory=list)  # server notifications, by method
    measured_waste: dict[str, int] = field(default_factory=dict)  # tokens per tool, for the score
    looks: list[str] = field(default_factory=list)  # how each sandbox's snapshots were taken (Watch.path)


def make_after_listing(session: SandboxSession, server: RunningServer, plan: ProbePlan,
                       restart: Callable[[], RunningServer], *, startup_timeout: float = 60.0,
                       request_timeout: float = 30.0, progress: Progress = lambda _: None,
                       drain_egress: Drain | None = None,
                       seeded: Seeded | None = None, before_probes: Callable[[], None] | None = None,
                       health: WireHealth | None = None) -> tuple[AfterListing | None, ProbePhaseResult]:
    """Seed the running sandbox now (before the handshake) and return the hook `collect` runs after listing.

    `drain_egress` (the egress sink, when the run is in "observe" mode) returns the attempts logged for a container
    since the last call; each call's record gets them, and B2 reports them. `seeded`: the server was seeded already
    (by the head start, with this plan): its Watch and baseline are taken over, its failure reported as seeding's.
    `before_probes` runs in a thread beside the start-up record's looks, and ends before the first probe call.
    `health`: the listing session's wire health (its fault names what ended a call; its last tools/call answer is
    what a refused call's canaries are read from)."""
    holder = ProbePhaseResult(options=plan.options, cpus=plan.policy.nano_cpus / 1e9)
    if not plan.options.enabled or plan.canaries is None or plan.workspace is None:
        return None, holder
    from sandbox.run.observe import ObserveError
    from scanner.probes.runner import ProbeRunner, SandboxAccess, seed
    from scanner.probes.listing_secrets import listing_canaries
    from scanner.rules.file_kinds import configured_paths

    planted = plan.canaries.env
    holder.configured = configured_paths({k: v for k, v in plan.policy.env.items() if k not in planted})
    manifest = plan.workspace.manifest
    holder.seeded = frozenset((*plan.canaries.files, manifest.root, *manifest.files, *manifest.dirs))
    access = SandboxAccess(docker=session.client, server=server, manifest=plan.workspace.manifest,
                           archives=plan.archives(), canaries=plan.canaries, restart=restart,
                           startup_timeout=startup_timeout, request_timeout=request_timeout, cpus=holder.cpus,
                           drain_egress=drain_egress, health=health)
    try:
        watched, baseline = seeded.result() if seeded is not None else seed(access, server, plan.options.observer)
    except ObserveError as exc:
        holder.errors.append(f"probing skipped: could not seed the sandbox: {exc}")
        return None, holder
    runner = ProbeRunner(access, plan.options, baseline, progress, watched)

    async def after_listing(client: Any, inventory: Inventory) -> None:
        holder.tools = list(inventory.tools)
        holder.outcome = await runner.run(client, inventory.tools, _before_first_call(inventory.tools, before_probes))
        holder.listing_canaries = listing_canaries(inventory, holder.outcome.tools_after, plan.canaries.locations)

    return AfterListing(run=after_listing, on_message=runner.on_message), holder


def _before_first_call(tools: list[dict[str, Any]], before_probes: Callable[[], None] | None
                       ) -> Callable[[], Awaitable[None]] | None:
    """What the runner awaits beside its start-up record, in a thread: jsonschema imported when a tool has an output
    schema (scanner/client/tool_schemas.py), then `before_probes` (the wait for P10's second server)."""
    from scanner.client.tool_schemas import checks_results, import_validation

    steps = ([import_validation] if checks_results(tools) else []) + ([before_probes] if before_probes else [])
    if not steps:
        return None

    def run_steps() -> None:
        for step in steps:
            step()
    return partial(anyio.to_thread.run_sync, run_steps)


def summarize(holder: ProbePhaseResult) -> ProbePhaseReport:
    """The probe phase's part of the report: the calls, the behaviour, their findings (P1-P11, B1-B7, FX) and the
    errors, and the tokens per tool the probes measured being wasted (P1-P5), for the score the scan computes once
    over all findings."""
    outcome = holder.outcome
    if outcome is None:
        return ProbePhaseReport(errors=list(holder.errors))
    from scanner.probes.call_behavior import unseen_files
    from scanner.rules.behavior import check_listing_canaries, evaluate_behavior
    from scanner.rules.fixture import refusal_finding
    from scanner.rules.probe import evaluate_probes

    options = holder.options
    probes = [result if options.include_responses else result.without_response() for result in outcome.results]
    probe_findings = evaluate_probes(holder.tools, outcome.results)
    findings: list[Finding] = [item.finding for item in probe_findings]
    findings.extend(outcome.findings)
    findings.extend(evaluate_behavior(holder.tools, outcome.results, outcome.behavior, cpus=holder.cpus,
                                      configured=holder.configured, seeded=holder.seeded))
    findings.extend(check_listing_canaries(holder.listing_canaries))
    findings.extend(refusal_finding(refusal.tool, refusal.label, refusal.reason) for refusal in outcome.refused)
    waste: dict[str, int] = {}
    for item in probe_findings:
        if item.token_waste > 0 and item.finding.tool is not None and item.finding.category != "security":
            waste[item.finding.tool] = waste.get(item.finding.tool, 0) + item.token_waste
    unseen = unseen_files(outcome.behavior)  # a look that could not list every file: said, the scan incomplete
    return ProbePhaseReport(probes=probes, behavior=outcome.behavior, findings=findings,
                            errors=[*holder.errors, *outcome.errors, *([unseen] if unseen else [])],
                            measured_waste=waste,
                            notifications=outcome.notifications.entries(), looks=outcome.looks)
