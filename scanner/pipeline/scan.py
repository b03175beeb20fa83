"""`scan`: the stages of one scan in order, and the sandbox session's teardown whatever stage failed.

    target (targets, refusal) → resolve (install_request) → install (installation) → provenance (provenance_check)
    → run (server_start) → list and probe (listing) → served definitions (served) → lint → probes (probes.phase)
    → late egress → teardown → assemble

Each stage returns a value; `ScanParts` collects them as they return and `assemble` builds the Report once, at
the end (config applied, then score and verdict over every finding).
"""

from __future__ import annotations

import time

import httpx

from sandbox.core import engine, gc
from sandbox.core.images import RuntimeImage
from sandbox.core.session import SandboxSession
from sandbox.install.installers import install_allowlist
from sandbox.install.request import InstallRequest
from scanner.pipeline.assemble import ScanParts, assemble, refused_report
from scanner.pipeline.install_request import install_request
from scanner.pipeline.installation import install_info, install_server, runtime_image
from scanner.pipeline.interrupts import terminate_as_interrupt
from scanner.pipeline.launch import choose_command
from scanner.pipeline.lint import lint
from scanner.pipeline.listing import list_and_probe
from scanner.pipeline.scan_options import Progress, ScanOptions
from scanner.pipeline.provenance_check import check_provenance
from scanner.pipeline.refusal import known_bad_refusal
from scanner.pipeline.served import served_definitions
from scanner.pipeline.server_start import start
from scanner.pipeline.targets import parse_target
from scanner.pipeline.teardown import tear_down
from scanner.probes import phase as probe_phase
from scanner.registry.endpoints import RegistryEndpoints
from scanner.report.model import Report
from scanner.rules.behavior import egress_findings

__all__ = ["Progress", "ScanOptions", "run_scan"]


def run_scan(options: ScanOptions, progress: Progress = lambda _: None) -> Report:
    began = time.monotonic()
    target = parse_target(options.target)
    refused = known_bad_refusal(target, options.config)  # before anything is resolved or installed
    if refused is not None:
        return refused_report(target, refused, round(time.monotonic() - began, 3), options.config)
    endpoints = options.registry_endpoints()
    with endpoints.client() as http:  # the scan's one registry client: resolution, provenance, advisories
        parts = ScanParts(target=target)
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
        finally:
            parts.teardown = tear_down(session)
            parts.total_seconds = round(time.monotonic() - began, 3)
    return assemble(parts, options.config)


def _run_stages(parts: ScanParts, session: SandboxSession, request: InstallRequest, image: RuntimeImage,
                options: ScanOptions, endpoints: RegistryEndpoints, http: httpx.Client, progress: Progress) -> None:
    """Install, check provenance, run, list, lint and probe, each stage's value put into `parts` as it returns."""
    parts.installation = install_server(session, request, image, use_cache=options.use_cache, progress=progress)
    installed = parts.installation.installed
    parts.provenance = check_provenance(request, installed, client=http, endpoints=endpoints,
                                        advisories=options.advisories, progress=progress)
    command = choose_command(installed.name, installed.entry_points, options.command, options.server_args)
    parts.install = install_info(installed, command)
    parts.started = start(session, installed, command, options.policy, network=options.network,
                          probes=options.probes, progress=progress)
    parts.listing = list_and_probe(session, parts.started, options.timeouts, progress)
    parts.served = served_definitions(parts.listing.inventory, parts.listing.health, parts.listing.exit_code)
    parts.lint = lint(parts.listing.inventory)
    parts.probes = probe_phase.summarize(parts.listing.probed)
    if parts.started.drain is not None:  # what no probe call took: start-up without probes, or late after the last call
        late = parts.started.drain(parts.started.server.container_id)
        parts.late_egress = egress_findings(late, during="outside any probe call")
