"""The probe rules P6 and P7, built from recorded events: the server crashed or exited (P6, and which call stopped
it: scanner/probes/crash_attribution.py), a call timed out (P7)."""

from __future__ import annotations

from scanner.probes.model import ProbeResult
from scanner.report.model import Finding
from scanner.rules.registry import rule
from sandbox.core.untrusted import cap_text

EVIDENCE_CHARS = 300


def _finding(rule_id: str, *, tool: str | None, message: str, stderr_tail: str = "") -> Finding:
    evidence = cap_text(stderr_tail.strip(), EVIDENCE_CHARS) if stderr_tail.strip() else None
    return rule(rule_id).finding(tool, message, evidence=evidence)


def _how(exit_code: int | None) -> str:
    return f"exited with code {exit_code}" if exit_code is not None else "died"


def crash_finding(tool: str, label: str, *, exit_code: int | None, stderr_tail: str = "",
                  noticed_by: str | None = None) -> Finding:
    """P6: the server crashed or exited during a call, or right after it answered (`noticed_by`: the next call,
    sent when the server had already exited)."""
    when = (f"during probe '{label}'" if noticed_by is None else
            f"right after probe '{label}' answered (it was gone when probe '{noticed_by}' was sent)")
    return _finding("P6", tool=tool, message=f"The server {_how(exit_code)} {when}; it was restarted fresh.",
                    stderr_tail=stderr_tail)


def replayed_crash_finding(tool: str, *, exit_code: int | None, stderr_tail: str, when: str, decided: str) -> Finding:
    """P6 for a crash more than one call may have caused (scanner/probes/crash_replay.py): `when` the server ended
    (during or before the call that noticed), and how sending the suspects again decided on `tool`, or did not."""
    return _finding("P6", tool=tool, message=f"The server {_how(exit_code)} {when}; {decided}.",
                    stderr_tail=stderr_tail)


def timeout_finding(tool: str, label: str, *, timeout_s: float) -> Finding:
    """P7: a call timed out and was cancelled."""
    message = f"Probe '{label}' did not answer within {timeout_s:g} s; it was cancelled."
    return _finding("P7", tool=tool, message=message)


def status_findings(results: list[ProbeResult], *, timeout_s: float) -> list[Finding]:
    """P6 and P7 for the calls recorded as crashed or timed out."""
    findings = []
    for result in results:
        if result.status == "crashed":
            findings.append(crash_finding(result.tool, result.label, exit_code=None, stderr_tail=result.error or ""))
        elif result.status == "timeout":
            findings.append(timeout_finding(result.tool, result.label, timeout_s=timeout_s))
    return findings
