"""`scan`: the stages of one scan in order, and the sandbox session's teardown whatever stage failed.

    target (targets, refusal) → resolve (install_request) → install (installation) → provenance (provenance_check)
    → source (source_scan: vet over the installed files) → run (server_start) → list and probe (listing) → served definitions (served) → lint → probes (probes.phase)
    → late egress → second listing under another client identity (relisting; P10) → conformance (W) → teardown
    → assemble

What has no order runs in threads beside the stages (`Concurrent`): the engine connection and the runtime image
check beside the resolution, the gc sweep beside the install, provenance beside the run (its result is read last,
and a failure there skips only it), and the second listing's server, started just after the first and listed
beside it, then removed before the first probe call (so what it tried on the network is start-up egress, as the
first server's is, never a probe call's). Each phase's wall seconds are in the report's `timings` (`PhaseClock`).

Each stage returns a value; `ScanParts` collects them as they return and `assemble` builds the Report once, at
the end (config applied, then status, score and verdict over every finding).

An exception no stage expected, once the sandbox session exists, does not lose the scan: teardown runs, and the
partial report is assembled with status `failed` and the error as one line (`internal error in <stage>: …`). A
SandboxError or UsageError (which the CLI maps to exit 3 and 2 with one line), KeyboardInterrupt and SystemExit
still propagate.
"""

from __future__ import annotations

import dataclasses
import time
from contextlib import nullcontext
from collections.abc import Callable
from concurrent.futures import Future, ThreadPoolExecutor, wait
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import docker

import httpx

from sandbox.core import engine, gc
from sandbox.core.errors import SandboxError
from sandbox.core.image_reads import ReadStore
from sandbox.core.images import RuntimeImage
from sandbox.core.session import SandboxSession
from sandbox.install.installers import install_allowlist
from sandbox.install.request import InstallRequest
from sandbox.run.netns import NetworkNamespace
from sandbox.run.policy import WORKSPACE
from sandbox.run.sink import LaunchedSink
from scanner.pipeline.after_session import SessionAnalysis, analyse
from scanner.pipeline.assemble import ScanParts, assemble, refused_report
from scanner.pipeline.install_request import install_request
from scanner.pipeline.conformance import check_conformance
from scanner.pipeline.early_server import EarlyServer
from scanner.pipeline.installation import install_info, install_server, installation_of, runtime_image
from scanner.pipeline.installed_files import InstalledFiles
from scanner.pipeline.head_start import HeadStart
from scanner.pipeline.interrupts import ScanInterrupted, caused_by_interrupt, terminate_as_interrupt, uninterruptible
from scanner.pipeline.inventory_model import Inventory
from scanner.pipeline.launch import choose_command
from scanner.pipeline.lint import lint
from scanner.errors import UsageError
from scanner.pipeline.listing import list_and_probe
from scanner.pipeline.outcome import Failure
from scanner.pipeline.scan_options import Progress, ScanOptions
from scanner.pipeline.phase_clock import PhaseClock
from scanner.pipeline.provenance_check import Provenance, check_provenance
from scanner.pipeline.refusal import known_bad_refusal
from scanner.pipeline.relisting import Relisting, listing_problem, relist, skipped_relisting
from scanner.pipeline.served import served_definitions
from scanner.pipeline.server_start import StartedServer, server_namespace, start, start_sink_container
from scanner.pipeline.source_scan import SourceScan, scan_source
from scanner.pipeline.targets import Target, parse_target
from scanner.pipeline.teardown import tear_down
from scanner.probes import phase as probe_phase
from scanner.probes.egress_windows import late_canary_findings
from scanner.registry.endpoints import RegistryEndpoints
from scanner.report.model import Report, TargetInfo, TeardownInfo
from scanner.rules.cloaking import cloaking_findings
from scanner.rules.egress import egress_findings, start_up_egress

__all__ = ["Progress", "ScanOptions", "run_scan"]


def run_scan(options: ScanOptions, progress: Progress = lambda _: None, head_start: HeadStart | None = None) -> Report:
    """`head_start`: the engine connection, session and sink begun before the scan path was imported (the CLI's);
    taken over once the target is resolved; `total` then counts from its start, as the phases it ran do."""
    began = head_start.began if head_start is not None else time.monotonic()
    target = parse_target(options.target)
    refused = known_bad_refusal(target, options.config)  # before anything is resolved or installed
    if refused is not None:
        return refused_report(target, refused, round(time.monotonic() - began, 3), options.config)
    endpoints = options.registry_endpoints()
    clock = head_start.clock if head_start is not None else PhaseClock()
    if head_start is not None:
        head_start.show(progress)  # a first run's build of the sink's image says its steps
    # The scan's one registry client (resolution, provenance, advisories), and the threads of the work that has no
    # order: the engine beside the resolution, the gc sweep beside the install, provenance beside the run, the
    # second listing's server beside the first.
    early = head_start.registry() if head_start is not None else None  # the resolution's client, when it ran there
    with (nullcontext(early) if early is not None else endpoints.client()) as http, ThreadPoolExecutor(
            max_workers=6, thread_name_prefix="mcp-sandbox") as pool:
        parts = ScanParts(target=target, probes_enabled=options.probes.enabled, clock=clock,
                          launch=list(options.launch_findings))
        engine_ready = pool.submit(_engine_and_image, clock, target.ecosystem, options, progress, head_start)
        request = _resolved(target, options, endpoints, http, progress, clock, head_start)
        client, image = engine_ready.result()
        in_session(parts, client, pool, began, lambda session, running: _run_stages(
            parts, session, request, image, options, endpoints, http, progress, running),
                   head_start=head_start)
    return assemble(parts, options.config)


def _resolved(target: Target, options: ScanOptions, endpoints: RegistryEndpoints, http: httpx.Client,
              progress: Progress, clock: PhaseClock, head_start: HeadStart | None) -> InstallRequest:
    """What the sandbox installs: resolved in the head start when it began there, else now."""
    if head_start is not None and head_start.request is not None:
        return head_start.request.result()  # timed as resolve there; its allowlist checked there too
    with clock.phase("resolve"):
        request = install_request(target, options, endpoints, http, progress)
    install_allowlist(request)  # a mirror the install could not reach is refused here, before anything starts
    return request


def in_session(parts: ScanParts, client: docker.DockerClient, pool: ThreadPoolExecutor, began: float,
               stages: Callable[[SandboxSession, Concurrent], None], *, head_start: HeadStart | None = None) -> None:
    """Run `stages` in a fresh sandbox session (`head_start`'s, its sink launched already, when given), the gc sweep
    beside them, and tear the session down whatever happens: a failure no stage expected becomes the partial
    report's `failure`; a SandboxError or UsageError goes to the CLI (its one line and exit code, 3 or 2), after
    teardown."""
    sweep = pool.submit(parts.clock.timed, "gc_sweep", gc.sweep, client)  # what killed scanners left behind
    session = head_start.take() if head_start is not None else SandboxSession(client)
    parts.session = session.id
    running = Concurrent(pool, sweep, sink=head_start.sink if head_start is not None else None,
                         early=head_start.server if head_start is not None else None)
    interrupted = False
    try:
        with terminate_as_interrupt():
            stages(session, running)
    except (SandboxError, UsageError):
        raise
    except Exception as exc:  # noqa: BLE001 - deliberately any: the partial report is written, status failed
        interrupted = caused_by_interrupt(exc)  # a Ctrl-C CPython wrapped (a module imported late): no failure
        if not interrupted:
            parts.failure = Failure.of(parts.stage, exc)
    except KeyboardInterrupt:  # Ctrl-C, or SIGTERM/SIGHUP as one: the threads must not wait out their own timeouts
        interrupted = True
    finally:
        # A second signal must not cut short the halt, the wait for the threads or the teardown; one held while an
        # interrupted scan ends is dropped (delivered, it would replace ScanInterrupted and the line it carries).
        with uninterruptible(redeliver=not interrupted):
            if interrupted:  # the head start's threads given up too (a sink image's build): nothing waits for them
                (head_start.halt if head_start is not None else session.halt)()
            running.settle()  # no thread of this scan creates a container once teardown has begun
            _provenance_after_failure(parts, running)
            parts.teardown = tear_down_after(session, parts)
        parts.total_seconds = round(time.monotonic() - began, 3)
    if interrupted:  # the CLI's last line says what the teardown left
        raise ScanInterrupted(None if parts.teardown is None else list(parts.teardown.leftovers))


@dataclass
class Concurrent:
    """What runs in the scan's threads beside its stages: the gc sweep, provenance, the source stage and the second
    listing."""

    pool: ThreadPoolExecutor
    sweep: Future[Any]
    sink: Future[LaunchedSink] | None = None
    early: Future[EarlyServer | None] | None = None  # a cached install's servers, begun in the head start
    provenance: Future[Provenance] | None = None
    relisting: Future[Relisting] | None = None
    namespace: Future[tuple[NetworkNamespace | None, str | None]] | None = None
    source: Future[SourceScan] | None = None

    def futures(self) -> list[Future[Any]]:
        futures = (self.sweep, self.sink, self.early, self.provenance, self.relisting, self.namespace, self.source)
        return [future for future in futures if future is not None]

    def settle(self) -> None:
        """Wait for every thread (without raising what they raised: the stage that reads a result does)."""
        wait(self.futures())


def _provenance_after_failure(parts: ScanParts, running: Concurrent) -> None:
    """A stage that failed after provenance (and the source stage) began does not lose what they found beside it."""
    future = running.provenance
    if parts.provenance is None and parts.failure is not None and future is not None and future.exception() is None:
        parts.provenance = future.result()
    source = running.source
    if parts.source is None and parts.failure is not None and source is not None and source.exception() is None:
        parts.source = source.result()


def _engine_and_image(clock: PhaseClock, ecosystem: str, options: ScanOptions, progress: Progress,
                      head_start: HeadStart | None) -> tuple[docker.DockerClient, RuntimeImage]:
    if head_start is not None:
        client = head_start.client()  # timed as engine_connect where it ran
    else:
        with clock.phase("engine_connect"):
            client = engine.connect()
    with clock.phase("image_check"):
        return client, runtime_image(client, ecosystem, options.ca_bundle, progress)


def tear_down_after(session: SandboxSession, parts: ScanParts) -> TeardownInfo | None:
    """Teardown, whatever came before; if it raises, that is the scan's failure too (the report is still written)."""
    parts.stage = "teardown"
    try:
        with parts.clock.phase("teardown"):
            return tear_down(session)
    except Exception as exc:  # noqa: BLE001 - deliberately any: the report says teardown failed, and how
        parts.failure = parts.failure or Failure.of("teardown", exc)
        return None


def _run_stages(parts: ScanParts, session: SandboxSession, request: InstallRequest, image: RuntimeImage,
                options: ScanOptions, endpoints: RegistryEndpoints, http: httpx.Client, progress: Progress,
                running: Concurrent) -> None:
    """Install, check provenance, run, list, lint and probe, each stage's value put into `parts` as it returns
    (and `parts.stage` naming the stage running, for an exception no stage expected)."""
    clock = parts.clock
    parts.stage = "install"
    early = running.early.result() if running.early is not None else None  # begun while the CLI imported
    if options.network == "observe" and running.sink is None:  # the sink's container boots beside the install
        running.sink = running.pool.submit(start_sink_container, session, options.policy, progress, clock)
    plan = running.pool.submit(clock.timed, "probe_plan", probe_phase.prepare, options.probes, options.policy
                               ) if early is None else None
    if early is not None:  # looked up (and timed as install_lookup) in the head start
        parts.installation = installation_of(early.installed)
    else:
        with clock.phase("install_lookup"):  # a fresh install's parts are timed inside (install_proxy, …)
            parts.installation = install_server(session, request, image, use_cache=options.use_cache,
                                                progress=progress, clock=clock)
    running.sweep.result()
    installed = parts.installation.installed
    # Provenance asks the registries about what was installed; nothing the run does waits for it. It and the source
    # stage (vet over the package's own files, V1) read the installed image through one container.
    files = InstalledFiles(session, installed, parts.target.ecosystem, users=2, store=ReadStore())
    running.provenance = running.pool.submit(clock.timed, "provenance", check_provenance, request, files, client=http,
                                             endpoints=endpoints, advisories=options.advisories, progress=progress)
    running.source = running.pool.submit(scan_source, files, parts.target.ecosystem,
                                         dependencies=options.vet_dependencies, progress=progress,
                                         folder=_folder(parts.target),
                                         plugin_listed=options.plugin_listed)
    parts.stage = "run"
    command = early.command if early is not None else choose_command(
        installed.name, installed.entry_points, options.command, options.server_args)
    parts.install = install_info(installed, command)
    serve(parts, session, installed.image, command, options, progress, running, plan, early=early)


def _folder(target: Target | TargetInfo) -> Path | None:
    """A folder target's folder (the source stage reads its agent plugin files there)."""
    return target.path if isinstance(target, Target) and target.kind == "folder" else None


def serve(parts: ScanParts, session: SandboxSession, image: str, command: list[str], options: ScanOptions,
          progress: Progress, running: Concurrent, plan: Future[probe_phase.ProbePlan] | None, *,
          working_dir: str = WORKSPACE, early: EarlyServer | None = None) -> None:
    """Run the server from `image` (installed, or a container image as shipped: scanner/pipeline/image_scan.py),
    list, lint, probe, list again, check conformance, then read provenance when it runs beside. The run policy is
    the probe plan's (canaries planted)."""
    clock = parts.clock
    parts.stage = "run"
    parts.started = _started(session, image, command, options, progress, running, plan, working_dir, early, clock)
    running.namespace = running.pool.submit(clock.timed, "namespace_read", server_namespace, session,
                                            parts.started.server)
    # The second listing's server starts now, beside the first, and is gone before the first probe call; none when
    # P10 is turned off.
    running.relisting = _relisting(running, session, parts.started, options, progress, early, clock)
    parts.stage = "listing"
    relisted = running.relisting
    analysis: list[SessionAnalysis] = []  # the lint and the probes' summary, worked out while the server ends

    def analysed(inventory: Inventory, probed: probe_phase.ProbePhaseResult) -> SessionAnalysis:
        return analyse(running.pool, inventory, probed, running.futures(), lint=lint, summarize=probe_phase.summarize)
    parts.listing = list_and_probe(session, parts.started, options.timeouts, progress, lambda: wait([relisted]), clock,
                                   lambda inventory, probed: analysis.append(analysed(inventory, probed)))
    after = analysis[0] if analysis else analysed(parts.listing.inventory, parts.listing.probed)
    after.models_built()
    namespace, unread = running.namespace.result()  # read from inside the server beside its handshake
    parts.started = dataclasses.replace(parts.started, namespace=namespace, namespace_unread=unread)
    parts.served = served_definitions(parts.listing.inventory, parts.listing.health, parts.listing.exit_code)
    parts.stage = "lint"
    parts.lint = after.lint.result()
    parts.stage = "probes"
    parts.probes = after.probes.result()
    if running.source is not None:  # an image as shipped has no installed package files to vet
        parts.stage = "source"
        parts.source = running.source.result()
    parts.stage = "relisting"
    second = relisted.result()
    late: list[dict[str, Any]] = []
    if parts.started.drain is not None:  # what no probe call took: start-up (both servers') without probes, or late
        with clock.phase("late_egress"):
            late = parts.started.drain(parts.started.server.container_id, settled=True)
        planted = parts.started.plan.canaries
        parts.late_egress = [*egress_findings(late, during="outside any probe call"),
                             *(late_canary_findings(late, planted.locations) if planted is not None else []),
                             *egress_findings(parts.started.drain.others(), during="during the scan (by a protocol "
                                              "the sink only counts, so no call is named)")]
    _relist_stage(parts, second)
    reported = [*late, *start_up_egress(parts.probes.behavior)]  # hosts the conformance server must not report again
    _conformance_stage(parts, session, options, progress, reported=reported)
    if parts.started.drain is not None:  # the sink's log read whole by now (the conformance server drains it too)
        parts.egress_gaps = parts.started.drain.gaps()
    if running.provenance is not None:
        parts.stage = "provenance"
        parts.provenance = running.provenance.result()


def _relisting(running: Concurrent, session: SandboxSession, started: StartedServer, options: ScanOptions,
               progress: Progress, early: EarlyServer | None, clock: PhaseClock) -> Future[Relisting]:
    """P10's second listing, made beside the first; done at once, skipped as chosen, when P10 is turned off."""
    off = options.relisting_off()
    if off is None:
        return running.pool.submit(clock.timed, "relisting", relist, session, started, options.timeouts, progress,
                                   second=early.second if early else None)
    skipped: Future[Relisting] = Future()
    skipped.set_result(skipped_relisting(off, chosen=True))
    return skipped


def _started(session: SandboxSession, image: str, command: list[str], options: ScanOptions, progress: Progress,
             running: Concurrent, plan: Future[probe_phase.ProbePlan] | None, working_dir: str,
             early: EarlyServer | None, clock: PhaseClock) -> StartedServer:
    """The server: the one the head start began (its start's failure raised here, where it would have started),
    or started now."""
    if early is not None:
        if early.started is None:
            assert early.failure is not None
            raise early.failure
        progress("starting the server in the sandbox")
        return early.started
    assert plan is not None
    return start(session, image, command, options.policy, network=options.network, probes=options.probes,
                 progress=progress, clock=clock, launched=running.sink.result()
                 if running.sink is not None else None, plan=plan.result(), read_namespace=False,
                 working_dir=working_dir)


def _conformance_stage(parts: ScanParts, session: SandboxSession, options: ScanOptions, progress: Progress, *,
                       reported: list[dict[str, Any]]) -> None:
    """json-schema-dialect over the listing; with --spec-version/--spec, the wire probe on a fresh server."""
    assert parts.listing is not None and parts.started is not None
    if parts.listing.inventory.connected and parts.listing.inventory.first_tools_list_seconds is not None:
        parts.stage = "conformance"
        parts.conformance = check_conformance(session, parts.started, parts.listing.inventory, options.conformance,
                                              options.timeouts, progress, reported=reported,
                                              notifications=[seen.method for seen in parts.probes.notifications])


def _relist_stage(parts: ScanParts, second: Relisting) -> None:
    """Compare the second listing (a fresh server, another client identity) with the first (P10), when the first
    listing was read whole."""
    assert parts.listing is not None
    inventory = parts.listing.inventory
    if not inventory.connected or inventory.first_tools_list_seconds is None:
        return  # nothing was listed: the outcome skips this stage with the listing
    problem = listing_problem(inventory)
    if problem is not None:
        parts.relisting = skipped_relisting(problem)
        return
    parts.relisting = second
    if second.problem is None:
        parts.cloaking = cloaking_findings(
            inventory.tools, second.tools, first_instructions=inventory.server.get("instructions"),
            second_instructions=second.instructions, second_client=second.identity.describe())
