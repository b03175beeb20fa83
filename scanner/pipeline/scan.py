"""`scan`: install the target in the sandbox, run it, read its tools, tear everything down, and build the report."""

from __future__ import annotations

import dataclasses
import json
import time
from typing import Any, Literal
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

import anyio
import httpx

from sandbox.core import engine, gc, images
from sandbox.install import container as install
from sandbox.install.installers import install_allowlist
from sandbox.run import server as run
from sandbox.run.attach import AttachedStdio
from sandbox.run.sink import Sink, start_sink
from sandbox.install.request import InstalledServer, InstallRequest, local_source
from sandbox.install.proxy.log import EgressAttempt as SandboxEgressAttempt
from sandbox.run.policy import RunPolicy
from sandbox.core.session import SandboxSession
from sandbox.install.proxy.upstream import UpstreamProxy
from scanner.config import Config
from scanner.pipeline.interrupts import terminate_as_interrupt, uninterruptible
from scanner.pipeline.inventory import Inventory, Timeouts, collect
from scanner.pipeline.launch import choose_command
from scanner.pipeline.transport import WireHealth
from scanner.probes import phase as probe_phase
from scanner.rules.behavior import egress_findings
from scanner.probes.egress_drain import EgressDrain
from scanner.probes.runner import ProbeOptions
from scanner.provenance.installed import advisory_source, check_installed
from scanner.provenance.known_bad import known_bad_finding
from scanner.provenance.model import EgressAttempt as InstallEgress
from scanner.rules.provenance import egress_finding
from scanner.ecosystems.registry import ecosystem as ecosystem_named
from scanner.ecosystems.registry import resolve
from scanner.registry.endpoints import RegistryEndpoints
from scanner.report.model import Finding, InstallInfo, Report, SandboxInfo, ServerInfo, TargetInfo, TeardownInfo
from scanner.rules.static.engine import run_rules
from scanner.report.score import compute
from scanner.pipeline.targets import Target, content_hash, parse_target
from sandbox.core.untrusted import cap_json, cap_text, decode_bytes, escape_for_terminal

Progress = Callable[[str], None]
MAX_ATTRIBUTION_CHARS = 300  # an install egress attempt's package or script, as stored in the report


@dataclass(frozen=True)
class ScanOptions:
    target: str
    server_args: list[str] = field(default_factory=list)
    command: str | None = None
    policy: RunPolicy = field(default_factory=RunPolicy)
    timeouts: Timeouts = field(default_factory=Timeouts)
    use_cache: bool = True
    ca_bundle: Path | None = None
    ignore_scripts: bool = False
    install_timeout: int = 600
    config: Config = field(default_factory=Config)
    advisories: str | None = None
    probes: ProbeOptions = field(default_factory=ProbeOptions)
    network: Literal["observe", "none"] = "observe"
    # The proxy the install proxy chains to; the CLI resolves --upstream-proxy / HTTPS_PROXY into it. None: direct.
    upstream_proxy: UpstreamProxy | None = None
    # Where registry lookups go (mirrors, CA bundle, upstream, allowed hosts); None: from the environment and the
    # options above (RegistryEndpoints.from_environment).
    endpoints: RegistryEndpoints | None = None

    def registry_endpoints(self) -> RegistryEndpoints:
        return self.endpoints or RegistryEndpoints.from_environment(
            ca_bundle=self.ca_bundle, upstream_proxy=self.upstream_proxy, advisories=self.advisories)


def run_scan(options: ScanOptions, progress: Progress = lambda _: None) -> Report:
    began = time.monotonic()
    target = parse_target(options.target)
    if target.path is None:
        refused = known_bad_finding(target.ecosystem, target.name, target.version_spec or "")
        if refused is not None and options.config.keeps(refused):  # before anything is resolved or installed
            return _refused_report(target, refused, began)
    endpoints = options.registry_endpoints()
    with endpoints.client() as http:  # the scan's one registry client: resolution, provenance, advisories
        return _scan(target, options, endpoints, http, progress, began)


def _scan(target: Target, options: ScanOptions, endpoints: RegistryEndpoints, http: httpx.Client,
          progress: Progress, began: float) -> Report:
    request = _install_request(target, options, endpoints, http, progress)
    install_allowlist(request)  # a mirror the install could not reach is refused here, before anything starts
    client = engine.connect()
    gc.sweep(client)  # what killed scanners left behind
    runtime = ecosystem_named(target.ecosystem).runtime
    progress(f"runtime image ({runtime})")
    runtime_image = images.ensure_runtime_image(client, runtime, ca_bundle=options.ca_bundle, progress=progress)
    report = Report(target=_target_info(target, None))
    session = SandboxSession(client)
    report.sandbox = SandboxInfo(session=session.id)
    measured_waste: dict[str, int] = {}
    try:
        with terminate_as_interrupt():
            measured_waste = _install_and_inspect(session, request, runtime_image, options, report,
                                                  _Registry(endpoints, http), progress)
    finally:
        with uninterruptible():
            result = session.teardown()
        report.sandbox.teardown = TeardownInfo(complete=result.complete, seconds=result.seconds,
                                               removed=result.removed, leftovers=result.leftovers)
        report.timings.total = round(time.monotonic() - began, 3)
    options.config.apply_to(report)  # config disable/ignore, for every family, in one place (kept, marked suppressed)
    if report.findings or report.server.protocol_version:  # once, over every finding: provenance, static, probes
        report.score, report.verdict = compute(report.findings, report.as_served().tools, measured_waste)
    return report


def _refused_report(target: Target, finding: Finding, began: float) -> Report:
    report = Report(target=_target_info(target, target.version_spec), findings=[finding])
    report.score, report.verdict = compute(report.findings, [])
    report.timings.total = round(time.monotonic() - began, 3)
    return report


def _install_request(target: Target, options: ScanOptions, endpoints: RegistryEndpoints, http: httpx.Client,
                     progress: Progress) -> InstallRequest:
    packages = ecosystem_named(target.ecosystem)
    if target.path is not None:
        return InstallRequest(
            target.ecosystem, local_source(target.path), target.name, f"local:{content_hash(target.path)}",
            local_path=target.path, ignore_scripts=options.ignore_scripts, ca_bundle=_ca(options),
            timeout_seconds=options.install_timeout, upstream_proxy=options.upstream_proxy,
            index_url=packages.install_index(endpoints),  # its dependencies come from the mirror too
        )
    progress(f"resolving {target.requested}")
    resolved = resolve(target, http, endpoints)
    return InstallRequest(
        target.ecosystem, packages.install_spec(resolved.name, resolved.version), resolved.name,
        f"{target.ecosystem}:{resolved.name}@{resolved.version}", ignore_scripts=options.ignore_scripts,
        ca_bundle=_ca(options), timeout_seconds=options.install_timeout, upstream_proxy=options.upstream_proxy,
        index_url=packages.install_index(endpoints),
    )


def _ca(options: ScanOptions) -> Path | None:
    if options.ca_bundle is not None:
        return options.ca_bundle
    return images.DEFAULT_CA_BUNDLE if images.DEFAULT_CA_BUNDLE.is_file() else None


@dataclass(frozen=True)
class _Registry:
    """The scan's registry endpoints and the one client built from them."""

    endpoints: RegistryEndpoints
    client: httpx.Client


def _install_and_inspect(session: SandboxSession, request: InstallRequest, runtime_image: images.RuntimeImage,
                         options: ScanOptions, report: Report, registry: _Registry,
                         progress: Progress) -> dict[str, int]:
    """Install, check provenance, run, list, lint and probe; returns the probes' measured token waste per tool."""
    progress(f"installing {request.spec}")
    installed = install.install(session, request, runtime_image.tag, runtime_image.image_id,
                                use_cache=options.use_cache)
    report.target.version = installed.version
    report.timings.install = installed.seconds
    progress("checking provenance")
    report.provenance, provenance_findings = check_installed(
        request.ecosystem, installed.name, installed.version, local=request.local_path is not None,
        manifest=installed.manifest or None, client=registry.client, endpoints=registry.endpoints,
        advisories=advisory_source(options.advisories, registry.client))
    report.findings.extend(provenance_findings)
    _record_install_egress(report, installed, f"{installed.name}@{installed.version}")
    command = choose_command(installed.name, installed.entry_points, options.command, options.server_args)
    report.install = _install_info(installed, command)
    policy = options.policy
    sink: Sink | None = None
    if options.network == "observe":
        progress("starting the egress sink")
        sink = start_sink(session, progress=progress)
        policy = dataclasses.replace(policy, network_mode=sink.network_mode)
    report.sandbox.network = options.network
    progress("starting the server in the sandbox")
    plan = probe_phase.prepare(options.probes, policy)  # canaries and the workspace seed
    server = run.start_server(session, installed.image, command, plan.policy)
    assert report.sandbox is not None
    report.sandbox.applied = server.applied
    report.timings.start = server.start_seconds
    stdio = AttachedStdio(server.socket)
    health = WireHealth()
    drain = EgressDrain(sink) if sink is not None else None
    after_listing, probed = probe_phase.make_after_listing(
        session, server, plan, lambda: run.start_server(session, installed.image, command, plan.policy),
        startup_timeout=options.timeouts.startup, request_timeout=options.timeouts.request, progress=progress,
        drain_egress=drain)
    progress("listing tools")
    try:
        inventory = anyio.run(collect, stdio, health, options.timeouts, server.started_at, after_listing)
    finally:
        run.close_attach(server)
        report.sandbox.stderr, report.sandbox.stderr_truncated = decode_bytes(bytes(stdio.stderr.data))
        report.sandbox.stderr_truncated |= stdio.stderr.truncated
    report.sandbox.exit_code = run.exit_code(session, server.container_id)
    _fill_inventory(report, inventory, health, options.config)
    measured_waste = probe_phase.apply_to_report(report, probed)
    if drain is not None:  # what no probe call took: start-up without probes, or late after the last call
        report.findings.extend(egress_findings(drain(server.container_id), during="outside any probe call"))
    return measured_waste


def _record_install_egress(report: Report, installed: InstalledServer, package: str) -> None:
    """Every host the install tried, from the egress proxy's logs, with the package and script whose install step
    tried it; one outside the registry allowlist is I7."""
    assert report.provenance is not None
    for attempt in installed.egress:
        recorded = _install_egress(attempt, package)
        report.provenance.egress.append(recorded)
        refused = egress_finding(recorded)
        if refused is not None:
            report.findings.append(refused)


def _install_egress(attempt: SandboxEgressAttempt, installed_package: str) -> InstallEgress:
    """The report's record of one attempt. Package and script were read from files the install wrote (escaped and
    capped there, and again here as untrusted text); an attempt that no install step claims is charged to the
    installed package as a whole."""
    host = f"{attempt.host}:{attempt.port}" if attempt.port else attempt.host
    package, script = attempt.package, attempt.script
    if package is None and script is None:
        package = installed_package
    return InstallEgress(host=host, allowed=attempt.allowed,
                         package=escape_for_terminal(package, MAX_ATTRIBUTION_CHARS) if package else None,
                         script=escape_for_terminal(script, MAX_ATTRIBUTION_CHARS) if script else None)


def _fill_inventory(report: Report, inventory: Inventory, health: WireHealth, config: Config) -> None:
    report.server = _server_info(inventory.server)
    report.tools = cap_json(inventory.tools)
    report.prompts = cap_json(inventory.prompts)
    report.resources = cap_json(inventory.resources)
    report.resource_templates = cap_json(inventory.resource_templates)
    report._served = {"tools": inventory.tools, "prompts": inventory.prompts, "resources": inventory.resources,
                      "resource_templates": inventory.resource_templates}
    if inventory.connected:
        _lint(report, inventory, config)
    report.timings.first_tools_list = inventory.first_tools_list_seconds
    report.errors.extend(inventory.errors)
    if health.noise_lines:
        samples = " | ".join(health.noise_samples)
        report.errors.append(cap_text(f"the server wrote {health.noise_lines} non-JSON-RPC lines to stdout "
                                      f"(first: {samples})", 1000))
    if report.sandbox and report.sandbox.exit_code is not None and not inventory.connected:
        report.errors.append(f"the server exited with code {report.sandbox.exit_code} before the session started")


def _server_info(served: dict[str, Any]) -> ServerInfo:
    def text(key: str, limit: int) -> str | None:
        value = served.get(key)
        return cap_text(value, limit) if isinstance(value, str) else None

    return ServerInfo(name=text("name", 256), version=text("version", 256),
                      protocol_version=text("protocol_version", 64),
                      capabilities=cap_json(served.get("capabilities") or {}), instructions=text("instructions", 16_384))


def _lint(report: Report, inventory: Inventory, config: Config) -> None:
    """Static rules on the live definitions as served (uncapped); run_scan scores all findings at the end."""
    payload = len(json.dumps({"tools": inventory.tools}, ensure_ascii=False).encode())
    server_info = {"name": inventory.server.get("name"), "version": inventory.server.get("version")}
    report.findings.extend(run_rules(inventory.tools, inventory.prompts, inventory.server.get("instructions"),
                                     server_info, payload_bytes=payload))


def _install_info(installed: InstalledServer, command: list[str]) -> InstallInfo:
    return InstallInfo(image=installed.image, image_id=installed.image_id, runtime_image=installed.runtime_image,
                       cached=installed.cached, command=command, installer_output=installed.installer_output,
                       seconds=installed.seconds,
                       # Names a step from its package's lockfile entry: untrusted text.
                       attribution_note=escape_for_terminal(installed.attribution_note, 1000)
                       if installed.attribution_note else None)


def _target_info(target: Target, version: str | None) -> TargetInfo:
    return TargetInfo(kind=target.kind, name=target.name, requested=target.requested, version=version,
                      ecosystem=target.ecosystem)
