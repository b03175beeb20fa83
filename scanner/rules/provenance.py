"""The install-provenance rules I1…I10: each is data (id, name, severity, category, why, fix)."""

from __future__ import annotations


from scanner.provenance.model import EgressAttempt, PackageProvenance
from scanner.rules.model import Rule
from scanner.report.model import Finding, Severity


RULES: dict[str, Rule] = {
    r.id: r
    for r in (
        Rule("I1", "unpinned-launch", "warning", "security",
             "The launch command does not pin what it runs, so a new (or hijacked) release runs without review.",
             "Pin an exact version (npm: name@1.2.3, PyPI: name==1.2.3), a full 40-character commit SHA for git, "
             "an @sha256: digest for images, and hashes for pip."),
        Rule("I2", "integrity-mismatch", "error", "security",
             "The bytes do not match the digest the registry published: the package was altered in transit or at rest.",
             "Do not install it; fetch it again from the official registry and report the mismatch."),
        Rule("I3", "registry-signature-invalid", "error", "security",
             "The registry's signature over name@version:integrity does not verify against its pinned public key.",
             "Do not install it; check that you talk to the real registry (no rewriting mirror or proxy)."),
        Rule("I4", "attestation-invalid", "error", "security",
             "A provenance attestation is present but does not verify or does not match the artifact.",
             "Do not install it; compare with the publisher's repository and report it to the registry."),
        Rule("I5", "build-time-code", "warning", "security",
             "Code runs at install time (install scripts, an sdist build) or comes from git/URL outside the registry.",
             "Prefer wheels / packages without install scripts; install with --ignore-scripts where possible; "
             "pin git/URL dependencies to a commit and review the scripts named here."),
        Rule("I6", "yanked-release", "warning", "metadata",
             "The release was yanked by its publisher, usually because it is broken or unsafe.",
             "Pin a version that is not yanked."),
        Rule("I7", "install-egress", "error", "security",
             "During install a script tried to reach a host outside the registry allowlist (phoning home).",
             "Do not use this package; review the named script."),
        Rule("I8", "known-bad-release", "error", "security",
             "This release is on the known-bad list (a published compromise or malicious release).",
             "Pin a release that is not on the list, or drop the package."),
        Rule("I9", "possible-typosquat", "warning", "security",
             "The name is a small edit away from a well-known MCP server package but is not it.",
             "Check the spelling against the official package name before installing."),
        Rule("I10", "known-advisory", "warning", "security",
             "An advisory (OSV) lists this exact version as affected; MAL- advisories mean a malicious package.",
             "Upgrade to a fixed version named in the advisory, or drop the package."),
    )
}


def finding(rule_id: str, message: str, *, evidence: str | None = None,
            severity: Severity | None = None) -> Finding:
    """Make the Finding of a rule; severity may be raised or lowered for a specific case."""
    return RULES[rule_id].finding(None, message, evidence=evidence, severity=severity)


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
