"""The release diff: what changed between the report of a package's earlier release and the report of a later one,
in behaviour (hosts contacted at install or run, install scripts, install-time writes, canaries touched, provenance
downgrades) and in surface (tools, descriptions, schemas, capabilities: the lock's change kinds, scanner/lock/*).

Pure: two Report objects in, a ChangesSince and its findings out. Behaviour is what matters most here: a release can
serve the very same tools and start sending mail somewhere new (postmark-mcp 1.0.16), so a new host, install script,
install-time file or touched canary is I12 (error), while a surface change is I13 (warning: releases change their
tools all the time; the static rules judge the new text itself).
"""

from __future__ import annotations

from scanner.lock.build import build_lock
from scanner.lock.changes import Change
from scanner.lock.diff import diff
from scanner.report.changes_since import ChangesSince, HostSeen, SurfaceChange
from scanner.report.model import Finding, Report
from scanner.report.score import verdict_of
from scanner.rules.egress import host_of
from scanner.rules.provenance import finding
from sandbox.core.untrusted import cap_text

MAX_LISTED = 8
RELEASE_DIFF_RULES = ("I12", "I13")  # the findings of a release diff, and of nothing else
# The lock reports the version change itself and the server's version: a release diff expects both.
EXPECTED_VERSION_CHANGE = ("version ", "server version changed")


def same_package(old: Report, new: Report) -> bool:
    """Two reports of one package (same ecosystem and name) at two different versions."""
    a, b = old.target, new.target
    return (a.ecosystem, a.name) == (b.ecosystem, b.name) and a.version != b.version


def release_changes(old: Report, new: Report, previous_report: str) -> ChangesSince:
    """Everything the later report `new` shows that the earlier `old` did not."""
    surface, provenance = _lock_changes(old, new)
    return ChangesSince(
        previous_version=old.target.version,
        previous_report=cap_text(previous_report, 500),
        hosts_added=[HostSeen(phase=phase, host=host) for phase, host in sorted(hosts(new) - hosts(old))],
        install_scripts_added=sorted(install_scripts(new) - install_scripts(old)),
        install_writes_added=sorted(install_writes(new) - install_writes(old)),
        canaries_added=sorted(canaries(new) - canaries(old)),
        capabilities_added=sorted(set(new.server.capabilities) - set(old.server.capabilities)),
        surface=surface,
        provenance=provenance,
        not_compared=not_compared(old, new),
    )


def hosts(report: Report) -> set[tuple[str, str]]:
    """(phase, host) of every attempt: the install's (provenance.egress) and the running server's (behaviour)."""
    seen = {("install", a.host.lower().rstrip(".")) for a in (report.provenance.egress if report.provenance else [])}
    seen |= {("run", host_of(event)) for call in report.behavior for event in call.egress}
    return {(phase, cap_text(host, 255)) for phase, host in seen if host and host != "?"}


def install_scripts(report: Report) -> set[str]:
    """`name: script` for each install script of the tree (the version dropped: every release has another)."""
    entries = list(report.provenance.install_scripts) if report.provenance else []
    return {_without_version(entry) for entry in entries}


def _without_version(entry: str) -> str:
    package, sep, script = entry.partition(": ")
    name, at, _version = package.rpartition("@")
    return f"{name if at and name else package}{sep}{script}"


def install_writes(report: Report) -> set[str]:
    writes = report.install.writes if report.install else []
    return {path for record in writes for path in (*record.created, *record.modified)}


def canaries(report: Report) -> set[str]:
    return {f"{event.where} ({event.how})" for call in report.behavior for event in call.canaries}


def not_compared(old: Report, new: Report) -> list[str]:
    """What one side did not record, so that no change there proves nothing."""
    out = []
    if old.provenance is None or new.provenance is None:
        out.append("install egress and install scripts (a report without a provenance section)")
    if not old.behavior or not new.behavior:
        out.append("run-time behaviour: hosts, canaries (a report without recorded behaviour)")
    if old.status != "complete" or new.status != "complete":
        out.append(f"part of the scan (the earlier report is {old.status}, this one {new.status})")
    return out


def _lock_changes(old: Report, new: Report) -> tuple[list[SurfaceChange], list[SurfaceChange]]:
    """The lock's diff of the two reports, split into surface and provenance, the expected version change left out."""
    changes = [c for c in diff(build_lock(old.as_served()), build_lock(new.as_served()))
               if not c.message.startswith(EXPECTED_VERSION_CHANGE)]
    surface = [_surface(c) for c in changes if not c.kind.startswith("provenance")]
    provenance = [_surface(c) for c in changes if c.kind == "provenance_changed" and c.severity != "info"]
    return surface, provenance


def _surface(change: Change) -> SurfaceChange:
    return SurfaceChange(kind=change.kind, severity=change.severity, tool=change.tool, message=change.message)


def change_findings(changes: ChangesSince) -> list[Finding]:
    """I12 for each behaviour change (error), I13 for each surface change that is not merely informational."""
    since = f"since {changes.previous_version or 'the previous release'}"
    out = [finding("I12", f"new host contacted {since} ({host.phase}): {host.host}") for host in changes.hosts_added]
    out += [finding("I12", f"new install script {since}: {script}") for script in changes.install_scripts_added]
    if changes.install_writes_added:
        listed = ", ".join(changes.install_writes_added[:MAX_LISTED])
        more = len(changes.install_writes_added) - MAX_LISTED
        out.append(finding("I12", cap_text(f"the install writes outside its tree {since}: {listed}"
                                           + (f" and {more} more" if more > 0 else ""), 1_000)))
    out += [finding("I12", f"canary newly touched {since}: {canary}") for canary in changes.canaries_added]
    out += [finding("I12", cap_text(f"provenance {since}: {c.message}", 1_000), severity=c.severity)
            for c in changes.provenance]
    out += [_surface_finding(c, since) for c in changes.surface if c.severity != "info"]
    return out


def _surface_finding(change: SurfaceChange, since: str) -> Finding:
    found = finding("I13", cap_text(f"{change.kind.replace('_', ' ')} {since}: {change.message}", 1_000))
    return found.model_copy(update={"tool": change.tool})


def with_changes(report: Report, changes: ChangesSince) -> Report:
    """The report with its `changes_since` section and findings, and the verdict those findings give; the I12/I13 of
    an earlier diff (a batch's report, diffed again against another release) are replaced, not kept beside them."""
    kept = [f for f in report.findings if f.rule_id not in RELEASE_DIFF_RULES]
    findings = [*kept, *change_findings(changes)]
    return report.model_copy(update={"changes_since": changes, "findings": findings,
                                     "verdict": verdict_of(findings, report.status)})
