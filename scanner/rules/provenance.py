"""The install-provenance rules I1…I10: each is data (in the registry: scanner/rules/rules.toml); the checks that
produce their findings live in scanner/provenance and call `finding` here."""

from __future__ import annotations

from scanner.provenance.model import EgressAttempt, PackageProvenance
from scanner.rules.registry import rule
from scanner.report.model import Finding, Severity


def finding(rule_id: str, message: str, *, evidence: str | None = None,
            severity: Severity | None = None) -> Finding:
    """Make the Finding of a rule; severity may be raised or lowered for a specific case."""
    return rule(rule_id).finding(None, message, evidence=evidence, severity=severity)


def check_findings(package: PackageProvenance) -> list[Finding]:
    """One finding per failed check that names a rule (unavailable checks are "not checked", listed elsewhere)."""
    label = f"{package.ecosystem}:{package.name}@{package.version or '?'}"
    return [finding(c.rule_id, f"{label}: {c.name} check failed: {c.evidence}", evidence=c.evidence)
            for c in package.checks if c.outcome == "failed" and c.rule_id]


NPM_INSTALL_SCRIPTS = frozenset({"preinstall", "install", "postinstall", "prepare"})


def egress_finding(attempt: EgressAttempt) -> Finding | None:
    """I7 for an install-time connection to a host outside the registry allowlist (None when it was allowed), naming
    the package and script whose install step tried it, e.g. `install script postinstall of x@1.0.0 tried to reach
    exfil.example.invalid:443 (refused)`."""
    if attempt.allowed:
        return None
    return finding("I7", f"{install_actor(attempt)} tried to reach {attempt.host} (refused)",
                   evidence=f"host {attempt.host}")


def install_actor(attempt: EgressAttempt) -> str:
    """Who tried, as the install recorded it: a package's script(s), a phase that runs no package's script (npm
    fetching the tree, uv resolving it), or only the package being installed."""
    if attempt.package and attempt.script:
        names = [name.strip() for name in attempt.script.split(",")]
        if all(name in NPM_INSTALL_SCRIPTS for name in names):
            return f"install script{'s' if len(names) > 1 else ''} {attempt.script} of {attempt.package}"
        return f"{attempt.script} of {attempt.package}"
    if attempt.script:
        return attempt.script
    if attempt.package:
        return f"the install of {attempt.package}"
    return "an install step"
