"""The one place a scan's Report is built: from the values the stages returned (`ScanParts`, filled in as each
stage returns), with the config's disable/ignore applied once and the score and verdict computed once over every
finding, in stage order: provenance, install egress (I7), static lint, probes and behaviour, late egress."""

from __future__ import annotations

from dataclasses import dataclass, field

from scanner.config import Config
from scanner.pipeline.installation import Installation
from scanner.pipeline.listing import Listing
from scanner.pipeline.provenance_check import Provenance
from scanner.pipeline.server_start import StartedServer
from scanner.pipeline.served import Served
from scanner.pipeline.targets import Target
from scanner.probes.phase import ProbePhaseReport
from scanner.provenance.model import ProvenanceReport
from scanner.report.model import Finding, InstallInfo, Report, SandboxInfo, TargetInfo, TeardownInfo, Timings
from scanner.report.score import compute


@dataclass
class ScanParts:
    """What the stages of one scan returned so far; a stage that did not run leaves its field None."""

    target: Target
    session: str | None = None
    installation: Installation | None = None
    provenance: Provenance | None = None
    install: InstallInfo | None = None
    started: StartedServer | None = None
    listing: Listing | None = None
    served: Served | None = None
    lint: list[Finding] = field(default_factory=list)
    probes: ProbePhaseReport = field(default_factory=ProbePhaseReport)
    late_egress: list[Finding] = field(default_factory=list)  # what no probe call took (start-up, or late)
    teardown: TeardownInfo | None = None
    total_seconds: float | None = None


def assemble(parts: ScanParts, config: Config) -> Report:
    """The report, field by field from the parts (assigned as the stages' values are, without copying them)."""
    installed = parts.installation.installed if parts.installation else None
    report = Report(target=_target_info(parts.target, installed.version if installed else None))
    report.sandbox = _sandbox_info(parts)
    report.provenance = _provenance(parts)
    report.install = parts.install
    if parts.served is not None:
        _put_served(report, parts.served)
    report.probes, report.behavior = parts.probes.probes, parts.probes.behavior
    report.errors.extend(parts.probes.errors)
    report.timings = Timings(install=installed.seconds if installed else None,
                             start=parts.started.server.start_seconds if parts.started else None,
                             first_tools_list=parts.served.first_tools_list if parts.served else None,
                             total=parts.total_seconds)
    report.findings = _findings(parts)
    config.apply_to(report)  # disable/ignore, every family, in one place: suppressed findings kept and marked
    if report.findings or report.server.protocol_version:  # once, over every finding: provenance, static, probes
        report.score, report.verdict = compute(report.findings, report.as_served().tools, parts.probes.measured_waste)
    return report


def refused_report(target: Target, finding: Finding, seconds: float, config: Config) -> Report:
    """A registry target refused as known-bad before anything was resolved or installed."""
    report = Report(target=_target_info(target, target.version_spec), findings=[finding])
    config.apply_to(report)  # records the config in use (it cannot suppress the refusal: known_bad_refusal)
    report.score, report.verdict = compute(report.findings, [])
    report.timings.total = seconds
    return report


def _findings(parts: ScanParts) -> list[Finding]:
    return [*(parts.provenance.findings if parts.provenance else []),
            *(parts.installation.egress_findings if parts.installation else []),
            *parts.lint, *parts.probes.findings, *parts.late_egress]


def _put_served(report: Report, served: Served) -> None:
    report.server = served.server
    report.tools, report.prompts = served.tools, served.prompts
    report.resources, report.resource_templates = served.resources, served.resource_templates
    report._served = served.uncapped
    report.errors.extend(served.errors)


def _sandbox_info(parts: ScanParts) -> SandboxInfo | None:
    if parts.session is None:
        return None
    info = SandboxInfo(session=parts.session, teardown=parts.teardown)
    if parts.started is not None:
        info.network, info.applied = parts.started.network, parts.started.server.applied
    if parts.listing is not None:
        info.stderr, info.stderr_truncated = parts.listing.stderr, parts.listing.stderr_truncated
        info.exit_code = parts.listing.exit_code
    return info


def _provenance(parts: ScanParts) -> ProvenanceReport | None:
    """The provenance checks' report, with every host the install tried (in attempt order) as its egress."""
    if parts.provenance is None:
        return None
    report = parts.provenance.report
    if parts.installation is None:
        return report
    return report.model_copy(update={"egress": [*report.egress, *parts.installation.egress]})


def _target_info(target: Target, version: str | None) -> TargetInfo:
    return TargetInfo(kind=target.kind, name=target.name, requested=target.requested, version=version,
                      ecosystem=target.ecosystem)
