"""SARIF 2.1.0 for `vet`, with physical locations (the file relative to the vetted root under the %SRCROOT% base, and
the region's start line and column), so GitHub code scanning places each alert on its line. The path is written as a
URI (a space, `#` or `%` in a file name percent-encoded, or the alert lands on another file or none), and the columns
are code points, which the run's columnKind says (SARIF's default is UTF-16 code units). The rule catalogue goes in
the driver; each result names its rule by index."""

from __future__ import annotations

from urllib.parse import quote

from scanner import __version__
from scanner.report.sarif_cap import kept_indices, omitted_properties
from scanner.vet.catalogue import VET_RULES
from scanner.vet.model import VetFinding, VetResult
from scanner.vet.views import LEVEL

SCHEMA = "https://json.schemastore.org/sarif-2.1.0.json"
LEVELS = {"error": "error", "warning": "warning", "info": "note"}


def _rules() -> list[dict[str, object]]:
    return [{"id": r.id, "name": r.title, "shortDescription": {"text": r.title},
             "fullDescription": {"text": r.quote}, "helpUri": r.doc, "help": {"text": f"{r.detects}\nFix: {r.after}"},
             "defaultConfiguration": {"level": LEVELS[LEVEL[r.tier]]},
             "properties": {"tier": r.tier.value, "group": r.group}} for r in VET_RULES]


def _uri(path: str) -> str:
    """The path's bytes percent-encoded: a name that is not UTF-8 (read as surrogate escapes) keeps its own bytes."""
    return quote(path.encode("utf-8", "surrogateescape"), safe="/._-~@")


def _result(finding: VetFinding, index: dict[str, int]) -> dict[str, object]:
    region = {"startLine": finding.line, "startColumn": finding.column, "endColumn": finding.end_column}
    return {"ruleId": finding.rule_id, "ruleIndex": index[finding.rule_id], "level": LEVELS[LEVEL[finding.tier]],
            "message": {"text": finding.message},
            "locations": [{"physicalLocation": {"artifactLocation": {"uri": _uri(finding.file),
                                                                      "uriBaseId": "%SRCROOT%"},
                                                "region": region}}],
            "properties": {"tier": finding.tier.value, "confidence": finding.confidence,
                           "before": finding.before, "after": finding.after}}


def to_sarif(result: VetResult) -> dict[str, object]:
    index = {r.id: i for i, r in enumerate(VET_RULES)}
    results = [result.findings[i] for i in kept_indices([LEVEL[f.tier] for f in result.findings])]
    run = {"tool": {"driver": {"name": "mcp-sandbox vet", "version": __version__,
                               "informationUri": "https://modelcontextprotocol.io/specification/2026-07-28/changelog",
                               "rules": _rules()}},
           "columnKind": "unicodeCodePoints",
           "results": [_result(f, index) for f in results],
           "invocations": [{"executionSuccessful": True,
                            "toolExecutionNotifications": [{"message": {"text": n}, "level": "note"}
                                                           for n in result.notes]}],
           "properties": {"suppressed": len(result.suppressed), "filesScanned": result.files_scanned,
                          **omitted_properties(len(result.findings), len(results))}}
    return {"$schema": SCHEMA, "version": "2.1.0", "runs": [run]}
