"""SARIF 2.1.0 view of a Report, as GitHub code scanning accepts it: a rule catalogue with help text and a
`security-severity` per rule (so alerts rank), one result per finding with stable fingerprints, a logical location
naming the tool, and a physical location on every result (the checked file and the line of the tool's definition,
the lockfile, or the package URL of a registry target).

`security-severity` follows the rule's default severity: error 8.0 (high), warning 5.0 (medium), info 2.0 (low);
raised to the most severe of the rule's active results in the log, since code scanning ranks an alert by its rule's
`security-severity` alone (S12 is info by default, but a description boasting root access is an error that blocks:
shown as "Low" it would read as harmless).

A finding a config suppressed is a result too, with `suppressions: [{"kind": "external", "status": "accepted",
"justification": …}]` naming the config and its entry (GitHub code scanning shows it dismissed). A suppression the
config was refused is not a SARIF suppression (some consumers treat any entry as one): the result stays active and
says so in its `suppressionRefused` property.

The run's properties carry the report's `verdict`, `status` and `skipped` stages; its invocation is successful only
for a complete scan, with a notification per skipped stage and per error."""

from __future__ import annotations

import hashlib
import re
from dataclasses import dataclass
from typing import Any
from urllib.parse import quote

from scanner.report.locations import Artifact, report_artifact
from scanner.report.model import Finding, Report, ScannerInfo, SuppressedFinding
from scanner.report.sarif_cap import kept_indices, omitted_properties
from scanner.report.severity import rank
from scanner.rules.model import Rule
from scanner.rules.registry import ALL_RULES, lookup

SARIF_SCHEMA = "https://json.schemastore.org/sarif-2.1.0.json"
SARIF_VERSION = "2.1.0"
FINGERPRINT_KEY = "mcpSandboxFinding/v1"
LEVELS = {"error": "error", "warning": "warning", "info": "note"}
SECURITY_SEVERITY = {"error": "8.0", "warning": "5.0", "info": "2.0"}
_NUMBERS = re.compile(r"\d+(\.\d+)?")
# The base of a source finding's URI: the installed package's install root (node_modules/ or site-packages/).
PACKAGE_ROOT = "PACKAGEROOT"
PACKAGE_ROOT_TEXT = ("The install root of the scanned package in the sandbox image (npm: node_modules/, PyPI: "
                     "site-packages/); a path starts with the package's own name.")


@dataclass(frozen=True)
class Located:
    """One finding and where it is: the logical location (a tool, or the server) and the artifact it is in."""

    finding: Finding
    logical: dict[str, str]
    artifact: Artifact
    line: int = 1
    scope: str = ""  # more fingerprint material when one log holds several subjects (check-config's servers)
    refused: str | None = None  # why a config's suppression of this active finding was refused


def _rule(meta: Rule, severity: str | None = None) -> dict[str, Any]:
    """The catalogue entry of a rule; `severity` (the most severe of its active results) raises its
    security-severity above the rule's default."""
    ranked = meta.severity if severity is None or rank(severity) < rank(meta.severity) else severity
    return {
        "id": meta.id,
        "name": meta.name,
        "shortDescription": {"text": meta.why},
        "fullDescription": {"text": meta.docs or meta.why},
        "help": {"text": f"{meta.why}\nFix: {meta.fix}\n\n{meta.docs}",
                 "markdown": f"**{meta.id} {meta.name}** ({meta.category})\n\n{meta.why}\n\n**Fix:** {meta.fix}"
                             f"\n\n{meta.docs}"},
        "defaultConfiguration": {"level": LEVELS[meta.severity]},
        "properties": {"category": meta.category, "tags": [meta.category, "mcp"],
                       "security-severity": SECURITY_SEVERITY[ranked]},
    }


def fingerprint(finding: Finding, occurrence: int, scope: str = "") -> str:
    """Stable across runs: rule, tool and the message with its numbers blanked, plus the occurrence index."""
    message = _NUMBERS.sub("#", finding.message)
    parts = (finding.rule_id, finding.tool or "", message, str(occurrence)) + ((scope,) if scope else ())
    return hashlib.sha256("\x1f".join(parts).encode("utf-8", "surrogatepass")).hexdigest()


def _location(item: Located) -> dict[str, Any]:
    source = item.finding.location
    if source is not None:  # a file of the installed package (V1): its package-relative path and region
        region = {"startLine": source.line, "startColumn": source.column}
        if source.end_column is not None:
            region["endColumn"] = source.end_column
        return {"physicalLocation": {"artifactLocation": {"uri": quote(source.path, safe="/._-~@"),
                                                          "uriBaseId": PACKAGE_ROOT}, "region": region},
                "logicalLocations": [item.logical]}
    return {"physicalLocation": {"artifactLocation": {"uri": item.artifact.uri},
                                 "region": {"startLine": item.line}},
            "logicalLocations": [item.logical]}


def _result(item: Located, index: dict[str, int], occurrence: int) -> dict[str, Any]:
    finding = item.finding
    properties: dict[str, Any] = {"category": finding.category, "severity": finding.severity}
    if finding.evidence is not None:
        properties["evidence"] = finding.evidence
    if finding.fix:
        properties["fix"] = finding.fix
    result: dict[str, Any] = {
        "ruleId": finding.rule_id,
        "level": LEVELS[finding.severity],
        "message": {"text": finding.message if finding.tool is None else f"{finding.tool}: {finding.message}"},
        "locations": [_location(item)],
        "partialFingerprints": {FINGERPRINT_KEY: fingerprint(finding, occurrence, item.scope)},
        "properties": properties,
    }
    if item.refused is not None:
        properties["suppressionRefused"] = item.refused
    if isinstance(finding, SuppressedFinding):
        result["suppressions"] = [{"kind": "external", "status": "accepted", "justification":
                                   f"{finding.suppression.entry} in {finding.suppression.config}"}]
    if finding.rule_id in index:
        result["ruleIndex"] = index[finding.rule_id]
    return result


def _most_severe(findings: list[Finding]) -> dict[str, str]:
    """The most severe severity of each rule's findings."""
    most: dict[str, str] = {}
    for finding in findings:
        if finding.rule_id not in most or rank(finding.severity) > rank(most[finding.rule_id]):
            most[finding.rule_id] = finding.severity
    return most


def _extra_rules(findings: list[Finding], most: dict[str, str]) -> list[dict[str, Any]]:
    """Catalogue entries for findings of rules no catalogue knows, from what the findings say; security-severity is
    the most severe of the rule's active results (`most`), else its first finding's."""
    extra: dict[str, dict[str, Any]] = {}
    for finding in findings:
        if lookup(finding.rule_id) is None and finding.rule_id not in extra:
            severity = most.get(finding.rule_id, finding.severity)
            extra[finding.rule_id] = {"id": finding.rule_id, "name": finding.rule_name,
                                      "shortDescription": {"text": finding.rule_name},
                                      "properties": {"category": finding.category, "tags": [finding.category],
                                                     "security-severity": SECURITY_SEVERITY[severity]}}
    return list(extra.values())


def logical_location(finding: Finding, server: str) -> dict[str, str]:
    """The tool the finding is about (`function`), or the server for a server-level finding (`module`)."""
    if finding.tool is not None:
        return {"name": finding.tool, "fullyQualifiedName": f"{server}/{finding.tool}", "kind": "function"}
    return {"name": server, "fullyQualifiedName": server, "kind": "module"}


def sarif_log(located: list[Located], scanner: ScannerInfo, properties: dict[str, Any],
              artifacts: list[Artifact] | None = None) -> dict[str, Any]:
    """The SARIF log of located findings, as a JSON-ready dict: one run, listing `artifacts` and every artifact a
    result points at."""
    most = _most_severe([item.finding for item in located if not isinstance(item.finding, SuppressedFinding)])
    rules = [_rule(meta, most.get(meta.id)) for meta in ALL_RULES] + _extra_rules([item.finding for item in located],
                                                                                     most)
    index = {rule["id"]: i for i, rule in enumerate(rules)}
    seen: dict[tuple[str, str, str | None, str], int] = {}
    results = []
    for item in located:  # every result's fingerprint is taken before the cut, so it does not move with the cut
        key = (item.scope, item.finding.rule_id, item.finding.tool, _NUMBERS.sub("#", item.finding.message))
        seen[key] = seen.get(key, -1) + 1
        results.append(_result(item, index, seen[key]))
    kept = kept_indices([item.finding.severity for item in located],
                        [isinstance(item.finding, SuppressedFinding) for item in located])
    properties = {**properties, **omitted_properties(len(located), len(kept))}
    located = [located[i] for i in kept]
    uris = list(dict.fromkeys([a.uri for a in artifacts or []] + [item.artifact.uri for item in located]))
    run: dict[str, Any] = {
        "tool": {"driver": {"name": scanner.name, "version": scanner.version, "rules": rules}},
        "results": [results[i] for i in kept],
        "properties": properties,
    }
    if uris:
        run["artifacts"] = [{"location": {"uri": uri}} for uri in uris]
    if any(item.finding.location is not None for item in located):
        run["originalUriBaseIds"] = {PACKAGE_ROOT: {"description": {"text": PACKAGE_ROOT_TEXT}}}
    return {"$schema": SARIF_SCHEMA, "version": SARIF_VERSION, "runs": [run]}


def to_sarif(report: Report, artifact: Artifact | None = None) -> dict[str, Any]:
    """The SARIF log of a report; results point at `artifact`, by default the report's own target."""
    where = artifact or report_artifact(report)
    server = report.server.name or report.target.name
    refused = {(r.rule_id, r.tool): f"{r.entry}: {r.reason}" for r in report.config.refused} if report.config else {}
    located = [Located(f, logical_location(f, server), where, where.line(f.tool),
                       refused=None if isinstance(f, SuppressedFinding) else refused.get((f.rule_id, f.tool)))
               for f in [*report.findings, *report.suppressed]]
    properties: dict[str, Any] = {"verdict": report.verdict, "status": report.status,
                                  "skipped": [record.model_dump(mode="json") for record in report.skipped],
                                  "score": report.score.value if report.score else None,
                                  "scoreMeaning": "agent-friendliness: the token cost to an agent, not security",
                                  "target": report.target.requested}
    if report.config is not None:
        properties["config"] = {"path": report.config.path, "table": report.config.table,
                                "sha256": report.config.sha256, "explicit": report.config.explicit,
                                "suppressed": len(report.suppressed), "refused": len(report.config.refused)}
    log = sarif_log(located, report.scanner, properties, [where])
    log["runs"][0]["invocations"] = [_invocation(report)]
    return log


def _invocation(report: Report) -> dict[str, Any]:
    """The run's invocation: successful only for a complete scan; each stage skipped (not by choice) and each error
    as a tool execution notification, so a consumer sees an incomplete run as one, not as a clean result list."""
    notes = [{"level": "error", "message": {"text": f"{record.stage} skipped: {record.reason}"},
              "descriptor": {"id": f"skipped/{record.stage}"}} for record in report.skipped if not record.chosen]
    notes += [{"level": "error", "message": {"text": error}} for error in report.errors]
    return {"executionSuccessful": report.status == "complete", "toolExecutionNotifications": notes}
