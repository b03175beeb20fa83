"""`scan`: the stages of one scan in order, and the sandbox session's teardown whatever stage failed.

    target (targets, refusal) → resolve (install_request) → install (installation) → provenance (provenance_check)
    → source (source_scan: vet over the installed files) → run (server_start) → list and probe (listing) → served definitions (served) → lint → probes (probes.phase)
    → late egress → second listing under another client identity (relisting; P10) → conformance (W) → teardown
    → assemble

Each stage returns a value; `ScanParts` collects them as they return and `assemble` builds the Report once, at
the end (config applied, then status, score and verdict over every finding).

An exception no stage expected, once the sandbox session exists, does not lose the scan: teardown runs, and the
partial report is assembled with status `failed` and the error as one line (`internal error in <stage>: …`). A
SandboxError or UsageError (which the CLI maps to exit 3 and 2 with one line), KeyboardInterrupt and SystemExit
still propagate.
"""

from __future__ import annotations

import time
from typing import Any

import httpx

from sandbox.core import engine, gc
from sandbox.core.errors import SandboxError
from sandbox.core.images import RuntimeImage
from sandbox.core.session import SandboxSession
from sandbox.install.installers import install_allowlist
from sandbox.install.request import InstallRequest
from scanner.pipeline.assemble import ScanParts, assemble, refused_report
from scanner.pipeline.install_request import install_request
from scanner.pipeline.conformance import check_conformance
from scanner.pipeline.installation import install_info, install_server, runtime_image
from scanner.pipeline.interrupts import terminate_as_interrupt
from scanner.pipeline.launch import choose_command
from scanner.errors import UsageError
from scanner.pipeline.lint import lint
from scanner.pipeline.listing import list_and_probe
from scanner.pipeline.outcome import Failure
from scanner.pipeline.scan_options import Progress, ScanOptions
from scanner.pipeline.provenance_check import check_provenance
from scanner.pipeline.refusal import known_bad_refusal
from scanner.pipeline.relisting import listing_problem, relist, skipped_relisting
from scanner.pipeline.served import served_definitions
from scanner.pipeline.source_scan import scan_source
from scanner.pipeline.server_start import start
from scanner.pipeline.targets import parse_target
from scanner.pipeline.teardown import tear_down
from scanner.probes import phase as probe_phase
from scanner.registry.endpoints import RegistryEndpoints
from scanner.report.model import Report, TeardownInfo
from scanner.rules.cloaking import cloaking_findings
from scanner.rules.egress import egress_findings, new_hosts, start_up_egress

__all__ = ["Progress", "ScanOptions", "run_scan"]


def run_scan(options: ScanOptions, progress: Progress = lambda _: None) -> Report:
    began = time.monotonic()
    target = parse_target(options.target)
    refused = known_bad_refusal(target, options.config)  # before anything is resolved or installed
    if refused is not None:
        return refused_report(target, refused, round(time.monotonic() - began, 3), options.config)
    endpoints = options.registry_endpoints()
    with endpoints.client() as http:  # the scan's one registry client: resolution, provenance, advisories
        parts = ScanParts(target=target, probes_enabled=options.probes.enabled)
        request = install_request(target, options, endpoints, http, progress)
        install_allowlist(request)  # a mirror the install could not reach is refused here, before anything starts
        client = engine.connect()
        gc.sweep(client)  # what killed scanners left behind
        image = runtime_image(client, target.ecosystem, options.ca_bundle, progress)
        session = SandboxSession(client)
        parts.session = session.id
        try:
            with terminate_as_interrupt():
                _run_stages(parts, session, request, image, options, endpoints, http, progress)
        except (SandboxError, UsageError):
            raise  # the CLI's one line and exit code (3, 2)
        except Exception as exc:  # noqa: BLE001 - deliberately any: the partial report is written, status failed
            parts.failure = Failure.of(parts.stage, exc)
        finally:
            parts.teardown = _tear_down(session, parts)
            parts.total_seconds = round(time.monotonic() - began, 3)
    return assemble(parts, options.config)


def _tear_down(session: SandboxSession, parts: ScanParts) -> TeardownInfo | None:
    """Teardown, whatever came before; if it raises, that is the scan's failure too (the report is still written)."""
    parts.stage = "teardown"
    try:
        return tear_down(session)
    except Exception as exc:  # noqa: BLE001 - deliberately any: the report says teardown failed, and how
        parts.failure = parts.failure or Failure.of("teardown", exc)
        return None


def _run_stages(parts: ScanParts, session: SandboxSession, request: InstallRequest, image: RuntimeImage,
                options: ScanOptions, endpoints: RegistryEndpoints, http: httpx.Client, progress: Progress) -> None:
    """Install, check provenance, run, list, lint and probe, each stage's value put into `parts` as it returns
    (and `parts.stage` naming the stage running, for an exception no stage expected)."""
    parts.stage = "install"
    parts.installation = install_server(session, request, image, use_cache=options.use_cache, progress=progress)
    installed = parts.installation.installed
    parts.stage = "provenance"
    parts.provenance = check_provenance(request, installed, client=http, endpoints=endpoints,
                                        advisories=options.advisories, progress=progress)
    parts.stage = "source"  # vet over the package's own files, read out of the installed image (V1)
    parts.source = scan_source(session, installed, parts.target.ecosystem, dependencies=options.vet_dependencies,
                               progress=progress)
    parts.stage = "run"
    command = choose_command(installed.name, installed.entry_points, options.command, options.server_args)
    parts.install = install_info(installed, command)
    parts.started = start(session, installed, command, options.policy, network=options.network,
                          probes=options.probes, progress=progress)
    parts.stage = "listing"
    parts.listing = list_and_probe(session, parts.started, options.timeouts, progress)
    parts.served = served_definitions(parts.listing.inventory, parts.listing.health, parts.listing.exit_code)
    parts.stage = "lint"
    parts.lint = lint(parts.listing.inventory)
    parts.stage = "probes"
    parts.probes = probe_phase.summarize(parts.listing.probed)
    late: list[dict[str, Any]] = []
    if parts.started.drain is not None:  # what no probe call took: start-up without probes, or late after the last call
        late = parts.started.drain(parts.started.server.container_id)
        parts.late_egress = egress_findings(late, during="outside any probe call")
    reported = [*late, *start_up_egress(parts.probes.behavior)]
    _relist_stage(parts, session, options, progress, reported=reported)
    _conformance_stage(parts, session, options, progress, reported=reported)


def _conformance_stage(parts: ScanParts, session: SandboxSession, options: ScanOptions, progress: Progress, *,
                       reported: list[dict[str, Any]]) -> None:
    """json-schema-dialect over the listing; with --spec-version/--spec, the wire probe on a fresh server."""
    assert parts.listing is not None and parts.started is not None
    if parts.listing.inventory.connected and parts.listing.inventory.first_tools_list_seconds is not None:
        parts.stage = "conformance"
        parts.conformance = check_conformance(session, parts.started, parts.listing.inventory, options.conformance,
                                              options.timeouts, progress, reported=reported,
                                              notifications=[seen.method for seen in parts.probes.notifications])


def _relist_stage(parts: ScanParts, session: SandboxSession, options: ScanOptions, progress: Progress, *,
                  reported: list[dict[str, Any]]) -> None:
    """List the tools again in a fresh server under another client identity, compare (P10); what the second server
    tried on the network is B2 too, for the hosts not `reported` already outside the probe calls (its start-up
    repeats the first server's)."""
    assert parts.listing is not None and parts.started is not None
    inventory = parts.listing.inventory
    if not inventory.connected or inventory.first_tools_list_seconds is None:
        return  # nothing was listed: the outcome skips this stage with the listing
    parts.stage = "relisting"
    problem = listing_problem(inventory)
    if problem is not None:
        parts.relisting = skipped_relisting(problem)
        return
    parts.relisting = relist(session, parts.started, options.timeouts, progress)
    if parts.relisting.problem is None:
        parts.cloaking = cloaking_findings(
            inventory.tools, parts.relisting.tools, first_instructions=inventory.server.get("instructions"),
            second_instructions=parts.relisting.instructions, second_client=parts.relisting.identity.describe())
    if parts.started.drain is not None:
        events = new_hosts(parts.started.drain(parts.started.server.container_id), reported)
        during = "outside any probe call, while a second server started for the second listing"
        parts.late_egress += egress_findings(events, during=during)
