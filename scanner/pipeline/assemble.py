"""The one place a scan's Report is built: from the values the stages returned (`ScanParts`, filled in as each
stage returns), with the config's disable/ignore applied once and the score and verdict computed once over every
finding, in stage order: provenance, install egress (I7), source (V1), static lint, probes and behaviour, late egress, cloaking
(P10, from the second listing), conformance (W, and the B2 of its fresh server). The
status (complete, incomplete, failed) and the stages skipped come from `outcome`; a scan that did not read the
tools has no score, and its verdict is `incomplete` unless something already blocks it."""

from __future__ import annotations

import time
from dataclasses import dataclass, field

from scanner.config import Config
from scanner.pipeline.conformance import Conformance
from scanner.pipeline.installation import Installation
from scanner.pipeline.listing import Listing
from scanner.pipeline.phase_clock import PhaseClock
from scanner.pipeline.outcome import Failure, StageFacts, skipped_stages, status_of
from scanner.pipeline.provenance_check import Provenance
from scanner.pipeline.relisting import Relisting
from scanner.pipeline.server_start import StartedServer
from scanner.pipeline.served import Served
from scanner.pipeline.source_scan import SourceScan
from scanner.pipeline.targets import Target
from scanner.pipeline.teardown import server_end_info
from scanner.probes.phase import ProbePhaseReport
from scanner.provenance.model import ProvenanceReport
from scanner.report.model import (Finding, InstallInfo, Report, SandboxInfo, Skipped, Stage, TargetInfo,
                                  TeardownInfo, Timings)
from scanner.report.score import compute


@dataclass
class ScanParts:
    """What the stages of one scan returned so far; a stage that did not run leaves its field None."""

    target: Target | TargetInfo  # a TargetInfo as is: a remote server (scanner/pipeline/remote.py)
    session: str | None = None
    installation: Installation | None = None
    provenance: Provenance | None = None
    source: SourceScan | None = None  # V1: vet over the installed package's own files
    install: InstallInfo | None = None
    started: StartedServer | None = None
    listing: Listing | None = None
    served: Served | None = None
    lint: list[Finding] = field(default_factory=list)
    launch: list[Finding] = field(default_factory=list)  # ScanOptions.launch_findings
    probes: ProbePhaseReport = field(default_factory=ProbePhaseReport)
    late_egress: list[Finding] = field(default_factory=list)  # what no probe call took (start-up, or late)
    egress_gaps: list[str] = field(default_factory=list)  # what the sink's log may be missing (errors: incomplete)
    image_gaps: list[str] = field(default_factory=list)  # what a docker: image kept the looks from (errors: incomplete)
    relisting: Relisting | None = None  # the second listing, under another client identity
    cloaking: list[Finding] = field(default_factory=list)  # P10: how the two listings differ
    conformance: Conformance | None = None  # W*: json-schema-dialect, and the --spec-version wire probe
    teardown: TeardownInfo | None = None
    total_seconds: float | None = None
    probes_enabled: bool = True  # False with --no-probes: a choice, not a gap
    stage: Stage = "install"  # the stage running now: where an unexpected exception is charged
    failure: Failure | None = None  # the unexpected exception that ended the scan early
    not_run: list[Skipped] = field(default_factory=list)  # stages this kind of target cannot have (remote: sandbox)
    clock: PhaseClock = field(default_factory=PhaseClock)  # wall seconds per phase (the report's timings)


def assemble(parts: ScanParts, config: Config) -> Report:
    """The report, field by field from the parts (assigned as the stages' values are, without copying them)."""
    began = time.monotonic()
    installed = parts.installation.installed if parts.installation else None
    report = Report(target=_target_info(parts.target, installed.version if installed else None))
    report.sandbox = _sandbox_info(parts)
    report.provenance = _provenance(parts)
    report.install = parts.install
    if parts.served is not None:
        _put_served(report, parts.served)
    report.probes, report.behavior = parts.probes.probes, parts.probes.behavior
    report.notifications = parts.probes.notifications
    report.errors.extend([*parts.image_gaps, *parts.probes.errors, *_relisting_errors(parts),
                          *(parts.conformance.wire if parts.conformance else []), *parts.egress_gaps])
    report.conformance = parts.conformance.report if parts.conformance else None
    report.source = parts.source.info if parts.source else None
    report.findings = _findings(parts)
    if parts.failure is not None:
        report.errors.append(parts.failure.error)
    report.skipped = [*skipped_stages(_facts(parts)), *parts.not_run]
    report.status = status_of(parts.failure, report.skipped, report.errors)
    config.apply_to(report)  # disable/ignore, every family, in one place: suppressed findings kept and marked
    # Once, over every finding (provenance, static, probes); no score for definitions that were never read.
    score, report.verdict = compute(report.findings, report.as_served().tools, parts.probes.measured_waste,
                                    report.status)
    report.score = score if _listed(parts) else None
    parts.clock.add("assemble", time.monotonic() - began)
    report.timings = Timings(install=installed.seconds if installed else None,
                             start=parts.started.server.start_seconds if parts.started else None,
                             first_tools_list=parts.served.first_tools_list if parts.served else None,
                             total=parts.total_seconds, **parts.clock.seconds())
    return report


def refused_report(target: Target, finding: Finding, seconds: float, config: Config) -> Report:
    """A registry target refused as known-bad before anything was resolved or installed."""
    report = Report(target=_target_info(target, target.version_spec), findings=[finding])
    config.apply_to(report)  # records the config in use (it cannot suppress the refusal: known_bad_refusal)
    report.score, report.verdict = compute(report.findings, [])
    report.timings.total = seconds
    return report


def _listed(parts: ScanParts) -> bool:
    """tools/list was read: a session started and the tools' listing returned."""
    inventory = parts.listing.inventory if parts.listing else None
    return inventory is not None and inventory.connected and inventory.first_tools_list_seconds is not None


def _relisting_errors(parts: ScanParts) -> list[str]:
    """What went wrong on the second listing's wire, when that listing was compared with the first (P10)."""
    if parts.relisting is None or parts.relisting.problem is not None or parts.listing is None:
        return []
    return parts.relisting.errors([tool.definition for tool in parts.listing.inventory.rejected_tools])


def _listing_problem(parts: ScanParts) -> str | None:
    """Why tools/list was not read (the server's exit before the session, else the first error); None when it was,
    or when the listing stage never ran (the failure says why)."""
    if parts.listing is None or _listed(parts):
        return None
    errors = parts.served.errors if parts.served else parts.listing.inventory.errors
    exited = [line for line in errors if "before the session started" in line]
    return (exited or errors or ["the server never answered tools/list"])[0]


def _probes_problem(parts: ScanParts) -> str | None:
    """Why the probes did not run although asked for (after a listing that was read)."""
    if parts.listing is None or not _listed(parts) or parts.listing.probed.outcome is not None:
        return None
    reasons = [*parts.probes.errors, *parts.listing.inventory.errors]
    return reasons[0] if reasons else "the probes did not run"


def _teardown_problem(teardown: TeardownInfo | None, sandboxed: bool = True) -> str | None:
    if teardown is None and not sandboxed:
        return None  # nothing was started here to tear down (a remote server)
    if teardown is None:
        return "did not finish (an internal error during teardown)"
    if not teardown.complete:
        left = f"left {', '.join(teardown.leftovers)}" if teardown.leftovers else "see the sandbox"
        return f"incomplete: {left}; `mcp-sandbox gc` (or the next scan) removes what a finished scan left"
    return None


def _facts(parts: ScanParts) -> StageFacts:
    return StageFacts(failure=parts.failure, listing_problem=_listing_problem(parts),
                      probes_enabled=parts.probes_enabled,
                      probes_problem=None if parts.failure else _probes_problem(parts),
                      teardown_problem=_teardown_problem(parts.teardown, sandboxed=not parts.not_run),
                      relisting_problem=parts.relisting.problem if parts.relisting and not parts.failure else None,
                      relisting_chosen=parts.relisting is not None and parts.relisting.chosen,
                      conformance_problem=parts.conformance.problem if parts.conformance and not parts.failure
                      else None,
                      source_problem=parts.source.problem if parts.source else None,
                      plugin_problem=parts.source.plugin_problem if parts.source else None)


def _findings(parts: ScanParts) -> list[Finding]:
    return [*parts.launch, *(parts.provenance.findings if parts.provenance else []),
            *(parts.installation.egress_findings if parts.installation else []),
            *(parts.installation.write_findings if parts.installation else []),
            *(parts.source.findings if parts.source else []),
            *parts.lint, *parts.probes.findings, *parts.late_egress, *parts.cloaking,
            *(parts.conformance.findings + parts.conformance.egress if parts.conformance else [])]


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
        info.sink, info.namespace = parts.started.sink, parts.started.namespace
        info.namespace_unread = parts.started.namespace_unread
    if parts.listing is not None:
        info.stderr, info.stderr_truncated = parts.listing.stderr, parts.listing.stderr_truncated
        info.exit_code = parts.listing.exit_code
        info.startup_processes, info.teardown = server_end_info(parts.listing, parts.teardown)
    info.looks = list(parts.probes.looks)
    return info


def _provenance(parts: ScanParts) -> ProvenanceReport | None:
    """The provenance checks' report, with every host the install tried (in attempt order) as its egress."""
    if parts.provenance is None:
        return None
    report = parts.provenance.report
    if parts.installation is None:
        return report
    return report.model_copy(update={"egress": [*report.egress, *parts.installation.egress]})


def _target_info(target: Target | TargetInfo, version: str | None) -> TargetInfo:
    if isinstance(target, TargetInfo):
        return target
    return TargetInfo(kind=target.kind, name=target.name, requested=target.requested, version=version,
                      ecosystem=target.ecosystem)
