"""The install-provenance rules I1…I10 (I11: scanner/rules/install_writes.py): each is data (in the registry: scanner/rules/rules.toml); the checks that
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
    """Who tried, as the install recorded it (step_actor)."""
    return step_actor(attempt.package, attempt.script)


def step_actor(package: str | None, script: str | None) -> str:
    """An install step as the install named it: a package's script(s), a phase that runs no package's script (npm
    fetching the tree, uv resolving it), or only the package being installed."""
    if package and script:
        names = [name.strip() for name in script.split(",")]
        if all(name in NPM_INSTALL_SCRIPTS for name in names):
            return f"install script{'s' if len(names) > 1 else ''} {script} of {package}"
        return f"{script} of {package}"
    if script:
        return script
    if package:
        return f"the install of {package}"
    return "an install step"


SETUP_PY_RAN = "setup.py ran code at install time"
BACKEND_RAN = "its build backend ran code at install time"


def source_build_record(package: str, setup_py: bool, *, local: bool = False) -> str:
    """The install-script record of a package the install built from source (provenance.install_scripts), e.g.
    `docopt@0.6.2: setup.py (built from sdist: setup.py ran code at install time)`."""
    source = "its source folder or archive" if local else "sdist"
    return (f"{package}: setup.py (built from {source}: {SETUP_PY_RAN})" if setup_py
            else f"{package}: build backend (built from {source}: {BACKEND_RAN})")


UNKNOWN_BUILDS_RECORD = ("unknown: the resolved tree did not say which packages have no wheel here, so the install's "
                         "last step may have built sdists (their build code running) without naming them")


def unknown_builds_finding() -> Finding:
    """I5 when the install could not tell which packages it would build from source: build code may have run, and
    what it was is not known (a check that could not run says so rather than reading as none built)."""
    return finding("I5", "The install may have built packages from sdists (their build code running at install time); "
                   "which, if any, could not be read.", evidence=UNKNOWN_BUILDS_RECORD)


def source_build_finding(package: str, setup_py: bool, *, local: bool = False) -> Finding:
    """I5 for a package the install built from source: its build code ran at install time, as npm's install scripts
    do (and at the same severity)."""
    source = "its source folder or archive" if local else "sdist"
    return finding("I5", f"{package} was built from {source}: {SETUP_PY_RAN if setup_py else BACKEND_RAN}.",
                   evidence=source_build_record(package, setup_py, local=local))
