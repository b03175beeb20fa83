"""V1 source-spec-break: each `vet` finding on the installed package's own files as a report Finding. The mcp-vet
rule id, tier and confidence lead the message (and the evidence quotes the line), the location is the package-relative
path and region; BREAKING is a warning, every other tier info; category conformance, so never the verdict."""

from __future__ import annotations

from sandbox.core.untrusted import escape_for_terminal
from scanner.report.model import Finding, SourceLocation
from scanner.report.severity import Severity
from scanner.rules.registry import rule
from scanner.vet.model import Tier, VetFinding

MAX_PATH_CHARS = 400
MAX_EVIDENCE_CHARS = 500
SEVERITY_OF_TIER = {Tier.BREAKING: Severity.WARNING, Tier.DEPRECATED: Severity.INFO, Tier.WARNING: Severity.INFO,
                    Tier.ADVISORY: Severity.INFO}


def source_finding(found: VetFinding) -> Finding:
    """One V1 finding; the path and the quoted line came from the package (untrusted): escaped and capped."""
    path = escape_for_terminal(found.file, MAX_PATH_CHARS)
    where = f"{path}:{found.line}:{found.column}"
    message = (f"{found.rule_id} ({found.tier.value}, {found.confidence} confidence) at {where}: {found.message}"
               f" (see {found.doc_url})")
    return rule("V1").finding(None, message, severity=SEVERITY_OF_TIER[found.tier],
                              evidence=escape_for_terminal(found.before, MAX_EVIDENCE_CHARS),
                              fix=f"{found.after}" if found.after else None).model_copy(
        update={"location": SourceLocation(path=path, line=found.line, column=found.column,
                                           end_column=found.end_column)})


def source_findings(found: list[VetFinding]) -> list[Finding]:
    return [source_finding(f) for f in found]
