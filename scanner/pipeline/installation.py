"""Stage 3: install the package in the sandbox session, and read what the install did: every host it tried (with
the package and script whose step tried it; one outside the registry allowlist is I7), what each step wrote outside
the install tree (I11), and the report's install section once the launch command is known."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

import docker

from sandbox.core import images
from sandbox.core.session import SandboxSession
from sandbox.install import container as install
from sandbox.install.proxy.log import EgressAttempt as SandboxEgressAttempt
from sandbox.install.request import InstalledServer, InstallPhase, InstallRequest
from sandbox.install.writes import StepWrites
from sandbox.core.untrusted import escape_for_terminal
from scanner.ecosystems.registry import ecosystem as ecosystem_named
from scanner.pipeline.phase_clock import Phase, PhaseClock
from scanner.pipeline.scan_options import Progress
from scanner.provenance.model import EgressAttempt as InstallEgress
from scanner.report.model import Finding, InstallInfo, InstallStepWrites
from scanner.rules.install_writes import write_findings
from scanner.rules.provenance import egress_finding

MAX_ATTRIBUTION_CHARS = 300  # an install egress attempt's package or script, as stored in the report
MAX_PATH_CHARS = 320  # a path an install step wrote (escaped and capped at 300 by the install already)
# The report's timings field of each of a fresh install's phases (sandbox.install.request.INSTALL_PHASES).
TIMED_AS: dict[InstallPhase, Phase] = {"proxy": "install_proxy", "container": "install_container",
                                       "steps": "install_steps", "finish": "install_finish",
                                       "commit": "install_commit"}


@dataclass(frozen=True)
class Installation:
    """The installed server, and the install's egress as the report records it (provenance.egress) with the I7
    findings for the attempts the allowlist refused, in attempt order; then the I11 findings of the steps that wrote
    outside the install tree."""

    installed: InstalledServer
    egress: list[InstallEgress]
    egress_findings: list[Finding]
    write_findings: list[Finding] = field(default_factory=list)


def runtime_image(client: docker.DockerClient, ecosystem: str, ca_bundle: Path | None,
                  progress: Progress) -> images.RuntimeImage:
    """The ecosystem's runtime image the install runs on (built when missing)."""
    runtime = ecosystem_named(ecosystem).runtime
    progress(f"runtime image ({runtime})")
    return images.ensure_runtime_image(client, runtime, ca_bundle=ca_bundle, progress=progress)


def install_server(session: SandboxSession, request: InstallRequest, runtime_image: images.RuntimeImage, *,
                   use_cache: bool, progress: Progress, clock: PhaseClock) -> Installation:
    """The install (or the earlier one of the same identity); a fresh install's parts go into `clock` as
    install_proxy, install_container, … (the caller times the whole as install_lookup), also when it raises: an
    engine error mid-install is a partial report (a SandboxError is the CLI's one line), which keeps them."""
    progress(f"installing {request.spec}")
    phases: dict[InstallPhase, float] = {}
    try:
        installed = install.install(session, request, runtime_image.tag, runtime_image.image_id,
                                    use_cache=use_cache, progress=progress, phases=phases)
    finally:
        for phase, seconds in phases.items():
            clock.add(TIMED_AS[phase], seconds)
    return installation_of(installed)


def installation_of(installed: InstalledServer) -> Installation:
    """The installed server with the report's record of its install's egress and writes (I7, I11)."""
    egress = [_install_egress(attempt, f"{installed.name}@{installed.version}") for attempt in installed.egress]
    refused = [finding for finding in map(egress_finding, egress) if finding is not None]
    return Installation(installed=installed, egress=egress, egress_findings=refused,
                        write_findings=write_findings(step_writes(installed)))


def install_info(installed: InstalledServer, command: list[str]) -> InstallInfo:
    return InstallInfo(image=installed.image, image_id=installed.image_id, runtime_image=installed.runtime_image,
                       cached=installed.cached, command=command, installer_output=installed.installer_output,
                       seconds=installed.seconds,
                       # Names a step from its package's lockfile entry: untrusted text.
                       attribution_note=escape_for_terminal(installed.attribution_note, 1000)
                       if installed.attribution_note else None,
                       writes=step_writes(installed))


def step_writes(installed: InstalledServer) -> list[InstallStepWrites]:
    """The report's record of what each step wrote outside the install tree; a record no step claims (the install
    could not time its steps) is charged to the installed package as a whole, as its egress is."""
    return [_step_record(record, f"{installed.name}@{installed.version}") for record in installed.writes]


def _step_record(record: StepWrites, installed_package: str) -> InstallStepWrites:
    package, script = record.package, record.script
    if package is None and script is None:
        package = installed_package
    return InstallStepWrites(
        package=escape_for_terminal(package, MAX_ATTRIBUTION_CHARS) if package else None,
        script=escape_for_terminal(script, MAX_ATTRIBUTION_CHARS) if script else None,
        created=[escape_for_terminal(path, MAX_PATH_CHARS) for path in record.created],
        modified=[escape_for_terminal(path, MAX_PATH_CHARS) for path in record.modified],
        more=record.more, unreadable=record.unreadable, truncated=record.truncated)


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
