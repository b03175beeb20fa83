"""Provenance of what a scan installed: registry checks of the package (its ecosystem's), the advisories, and its
dependency tree from the lockfile the install produced. Called by `scan` after the install phase."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any

import httpx
from packaging.utils import canonicalize_name

from sandbox.install.pypi import BuiltFromSource

from scanner.ecosystems.registry import ecosystem as ecosystem_named
from scanner.provenance.advisories import AdvisorySource, LocalOsvExport, OsvApi, check_advisories
from scanner.provenance.launch import package_findings
from scanner.provenance.model import Check, EcosystemName, PackageProvenance, ProvenanceReport
from scanner.provenance.npm_lockfile import tree_findings
from scanner.provenance import pypi as _pypi_checks  # noqa: F401 - imported in the main thread for Pypi's methods
from scanner.registry.endpoints import DEFAULT_ENDPOINTS, RegistryEndpoints
from scanner.rules.provenance import (UNKNOWN_BUILDS_RECORD, check_findings, source_build_finding, source_build_record,
                                      unknown_builds_finding)
from scanner.report.model import Finding


def check_installed(ecosystem: EcosystemName, name: str, version: str, *, local: bool,
                    manifest: dict[str, Any] | None, client: httpx.Client,
                    endpoints: RegistryEndpoints = DEFAULT_ENDPOINTS,
                    advisories: AdvisorySource | None = None,
                    built: Sequence[BuiltFromSource] = (),
                    built_unknown: bool = False) -> tuple[ProvenanceReport, list[Finding]]:
    """Registry checks for a registry target (a local target has no registry metadata: `absent`), plus the tree and
    the packages the install built from source (`built`; `built_unknown`: the install could not tell which it would
    build, so one I5 says the last step may have built some unnamed). `client`: the scan's one registry client, built from
    `endpoints` (which say where each lookup goes)."""
    report = ProvenanceReport()
    findings: list[Finding] = []
    packages = ecosystem_named(ecosystem)
    if local:
        report.packages.append(PackageProvenance(
            ecosystem=ecosystem, name=name, version=version,
            checks=[Check(name="registry", outcome="absent",
                          evidence="a local folder or archive: no registry metadata, signature or attestation")],
        ))
    else:
        findings.extend(package_findings(ecosystem, name, version))
        package = packages.check_package(client, endpoints, name, version, manifest)
        # The release publishes no wheel and the install built it: one I5, the build's (it says what ran).
        built_here = any(b.package and _same_package(b.package, name, version) for b in built)
        judged = [c for c in package.checks if not (built_here and c.name == "wheel")]
        findings.extend(check_findings(package.model_copy(update={"checks": judged})))
        # After check_findings: a failed advisories check is reported once per advisory, not once more in bulk.
        advisory_check, advisory_findings = check_advisories(advisories, ecosystem, name, version)
        package.checks.append(advisory_check)
        findings.extend(advisory_findings)
        report.packages.append(package)
    report.dependency_tree = packages.dependency_tree(manifest, endpoints)
    if report.dependency_tree is not None:
        report.install_scripts = [f"{d.name}@{d.version}: {', '.join(d.install_scripts)}"
                                  for d in report.dependency_tree.with_install_scripts]
        findings.extend(tree_findings(report.dependency_tree))
    for build in built:
        label = build.package or f"{name}@{version}"
        local = build.package is None
        report.install_scripts.append(source_build_record(label, build.setup_py, local=local))
        if build.setup_py or not local:  # the user's own folder built by its declared backend runs none of its code
            findings.append(source_build_finding(label, build.setup_py, local=local))
    if built_unknown:
        report.install_scripts.append(UNKNOWN_BUILDS_RECORD)
        findings.append(unknown_builds_finding())
    return report, findings


def _same_package(label: str, name: str, version: str) -> bool:
    built_name, _, built_version = label.rpartition("@")
    return canonicalize_name(built_name) == canonicalize_name(name) and built_version == version


def advisory_source(setting: str | None, client: httpx.Client) -> AdvisorySource | None:
    """`--advisories`: a local OSV export folder, `osv` for the OSV API (opt-in: the scan's registry client, whose
    endpoints then allow the API's host), or nothing."""
    if not setting:
        return None
    if setting == "osv":
        return OsvApi(client)
    return LocalOsvExport(Path(setting).expanduser())
