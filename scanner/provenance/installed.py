"""Provenance of what a scan installed: registry checks of the package, and its dependency tree from the lockfile
the install produced. Called by `scan` after the install phase."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any, Literal

import httpx

from scanner.provenance.advisories import AdvisorySource, LocalOsvExport, OsvApi, check_advisories
from scanner.registry.client import make_client, trusted_ssl_context
from scanner.provenance.launch import package_findings
from scanner.provenance.model import Check, Dependency, DependencyTree, PackageProvenance, ProvenanceReport
from scanner.provenance.npm import check_npm_package
from scanner.provenance.npm_lockfile import lockfile_tree, tree_findings
from scanner.provenance.pypi import check_pypi_package
from scanner.rules.provenance import check_findings
from scanner.report.model import Finding

Ecosystem = Literal["npm", "pypi"]


def check_installed(ecosystem: Ecosystem, name: str, version: str, *, local: bool,
                    manifest: dict[str, Any] | None,
                    advisories: AdvisorySource | None = None,
                    ca_bundle: Path | None = None) -> tuple[ProvenanceReport, list[Finding]]:
    """Registry checks for a registry target (a local target has no registry metadata: `absent`), plus the tree.
    `ca_bundle`: the one `--ca-bundle` gave, which the registry client trusts instead of the system bundle."""
    report = ProvenanceReport()
    findings: list[Finding] = []
    if local:
        report.packages.append(PackageProvenance(
            ecosystem=ecosystem, name=name, version=version,
            checks=[Check(name="registry", outcome="absent",
                          evidence="a local folder or archive: no registry metadata, signature or attestation")],
        ))
    else:
        findings.extend(package_findings(ecosystem, name, version))
        with make_client(ca_bundle=ca_bundle) as client:
            package = (check_npm_package(client, name, version) if ecosystem == "npm"
                       else check_pypi_package(client, name, version))
        if ecosystem == "npm" and manifest:
            package.checks.append(_installed_integrity(package, manifest, name))
        findings.extend(check_findings(package))
        # After check_findings: a failed advisories check is reported once per advisory, not once more in bulk.
        advisory_check, advisory_findings = check_advisories(advisories, ecosystem, name, version)
        package.checks.append(advisory_check)
        findings.extend(advisory_findings)
        report.packages.append(package)
    if ecosystem == "pypi" and manifest and isinstance(manifest.get("requirements"), str):
        report.dependency_tree = python_tree(manifest["requirements"])
    if ecosystem == "npm" and manifest:
        report.dependency_tree = _npm_tree(manifest)
        report.install_scripts = [f"{d.name}@{d.version}: {', '.join(d.install_scripts)}"
                                  for d in report.dependency_tree.with_install_scripts]
        findings.extend(tree_findings(report.dependency_tree))
    return report, findings


def _installed_integrity(package: PackageProvenance, manifest: dict[str, Any], name: str) -> Check:
    """What npm installed (its lockfile's integrity) against what the registry publishes for that version."""
    entry = (manifest.get("packages") or {}).get(f"node_modules/{name}") or {}
    installed = entry.get("integrity")
    published = package.pins.integrity
    if not isinstance(installed, str) or not installed:
        return Check(name="installed-integrity", outcome="unavailable",
                     evidence="the install's lockfile records no integrity for the package", rule_id="I2")
    if not published:
        return Check(name="installed-integrity", outcome="unavailable",
                     evidence="the registry's integrity could not be verified, so nothing to compare with",
                     rule_id="I2")
    if installed != published:
        return Check(name="installed-integrity", outcome="failed", rule_id="I2",
                     evidence=f"installed {installed[:30]}… but the registry publishes {published[:30]}…")
    return Check(name="installed-integrity", outcome="verified", rule_id="I2",
                 evidence="the installed tarball's integrity equals the registry's dist.integrity")


def python_tree(requirements: str) -> DependencyTree:
    """The hash-pinned tree `uv pip compile --generate-hashes` wrote for the install (and that uv then installed
    with --require-hashes): one dependency per `name==version`, its first sha256 as integrity."""
    dependencies: list[Dependency] = []
    for block in re.split(r"\n(?=\S)", requirements):
        head = block.strip().split()[0] if block.strip() else ""
        if not head or head.startswith("#") or "==" not in head:
            continue
        name, _, version = head.partition("==")
        hashes = re.findall(r"--hash=(sha256:[0-9a-f]{64})", block)
        dependencies.append(Dependency(name=name, version=version, integrity=hashes[0] if hashes else None))
    return DependencyTree(lockfile="requirements.txt (uv pip compile --generate-hashes)", total=len(dependencies),
                          dependencies=dependencies)


def _npm_tree(manifest: dict[str, Any]) -> DependencyTree:
    return lockfile_tree(manifest, "package-lock.json")


def advisory_source(setting: str | None) -> AdvisorySource | None:
    """`--advisories`: a local OSV export folder, `osv` for the OSV API (opt-in), or nothing."""
    if not setting:
        return None
    if setting == "osv":
        return OsvApi(httpx.Client(timeout=20.0, verify=trusted_ssl_context()))  # the system CA: corporate proxies
    return LocalOsvExport(Path(setting).expanduser())
