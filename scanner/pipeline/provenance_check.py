"""Stage 4: the installed package's provenance (registry checks, signatures, attestations, advisories, the
dependency tree) through the scan's one registry client, and the findings it gives."""

from __future__ import annotations

from dataclasses import dataclass

import httpx

from sandbox.install.request import InstallRequest
from scanner.pipeline.installed_files import InstalledFiles
from scanner.pipeline.scan_options import Progress
from scanner.provenance.installed import advisory_source, check_installed
from scanner.provenance.model import ProvenanceReport
from scanner.registry.endpoints import RegistryEndpoints
from scanner.report.model import Finding


@dataclass(frozen=True)
class Provenance:
    report: ProvenanceReport  # without the install's egress: the assembly adds it (Installation.egress)
    findings: list[Finding]


def check_provenance(request: InstallRequest, files: InstalledFiles, *, client: httpx.Client,
                     endpoints: RegistryEndpoints, advisories: str | None, progress: Progress) -> Provenance:
    """The checks, beside the run: a cached install's manifest is read out of its image here (`files`, released
    once read), off the run's path."""
    progress("checking provenance")
    installed = files.installed
    try:
        manifest = files.manifest()
    finally:
        files.release()
    report, findings = check_installed(
        request.ecosystem, installed.name, installed.version, local=request.local_path is not None,
        manifest=manifest or None, client=client, endpoints=endpoints,
        advisories=advisory_source(advisories, client), built=installed.built,
        built_unknown=installed.built_unknown)
    return Provenance(report=report, findings=findings)
