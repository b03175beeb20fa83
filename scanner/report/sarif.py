"""SARIF 2.1.0 view of a Report: a rule catalogue with help text, one result per finding, stable fingerprints,
and a logical location naming the tool (plus the checked file as the physical location when there is one)."""

from __future__ import annotations

import hashlib
import re
from typing import Any
from urllib.parse import quote

from scanner.report.model import Finding, Report
from scanner.rules.model import Rule
from scanner.rules.registry import ALL_RULES, lookup

SARIF_SCHEMA = "https://json.schemastore.org/sarif-2.1.0.json"
SARIF_VERSION = "2.1.0"
FINGERPRINT_KEY = "mcpSandboxFinding/v1"
LEVELS = {"error": "error", "warning": "warning", "info": "note"}
_NUMBERS = re.compile(r"\d+(\.\d+)?")


def _rule(meta: Rule) -> dict[str, Any]:
    return {
        "id": meta.id,
        "name": meta.name,
        "shortDescription": {"text": meta.why},
        "fullDescription": {"text": meta.docs or meta.why},
        "help": {"text": f"{meta.why}\nFix: {meta.fix}\n\n{meta.docs}",
                 "markdown": f"**{meta.id} {meta.name}** ({meta.category})\n\n{meta.why}\n\n**Fix:** {meta.fix}"
                             f"\n\n{meta.docs}"},
        "defaultConfiguration": {"level": LEVELS[meta.severity]},
        "properties": {"category": meta.category, "tags": [meta.category, "mcp"]},
    }


def fingerprint(finding: Finding, occurrence: int) -> str:
    """Stable across runs: rule, tool and the message with its numbers blanked, plus the occurrence index."""
    message = _NUMBERS.sub("#", finding.message)
    material = "\x1f".join((finding.rule_id, finding.tool or "", message, str(occurrence)))
    return hashlib.sha256(material.encode("utf-8", "surrogatepass")).hexdigest()


def _location(finding: Finding, server: str, artifact_uri: str | None) -> dict[str, Any]:
    tool = finding.tool
    logical = {"name": tool, "fullyQualifiedName": f"{server}/{tool}", "kind": "function"} if tool is not None \
        else {"name": server, "fullyQualifiedName": server, "kind": "module"}
    location: dict[str, Any] = {"logicalLocations": [logical]}
    if artifact_uri is not None:
        location["physicalLocation"] = {"artifactLocation": {"uri": artifact_uri},
                                        "region": {"startLine": 1}}
    return location


def _result(finding: Finding, index: dict[str, int], server: str, artifact_uri: str | None,
            occurrence: int) -> dict[str, Any]:
    properties: dict[str, Any] = {"category": finding.category, "severity": finding.severity}
    if finding.evidence is not None:
        properties["evidence"] = finding.evidence
    if finding.fix:
        properties["fix"] = finding.fix
    result: dict[str, Any] = {
        "ruleId": finding.rule_id,
        "level": LEVELS[finding.severity],
        "message": {"text": finding.message if finding.tool is None else f"{finding.tool}: {finding.message}"},
        "locations": [_location(finding, server, artifact_uri)],
        "partialFingerprints": {FINGERPRINT_KEY: fingerprint(finding, occurrence)},
        "properties": properties,
    }
    if finding.rule_id in index:
        result["ruleIndex"] = index[finding.rule_id]
    return result


def _extra_rules(findings: list[Finding]) -> list[dict[str, Any]]:
    """Catalogue entries for findings of rules no catalogue knows, from what the findings say."""
    extra: dict[str, dict[str, Any]] = {}
    for finding in findings:
        if lookup(finding.rule_id) is None and finding.rule_id not in extra:
            extra[finding.rule_id] = {"id": finding.rule_id, "name": finding.rule_name,
                                      "shortDescription": {"text": finding.rule_name},
                                      "properties": {"category": finding.category, "tags": [finding.category]}}
    return list(extra.values())


def artifact_uri_for(path: str) -> str:
    """A relative URI reference for a local file path."""
    return quote(path.replace("\\", "/"), safe="/._-~")


def to_sarif(report: Report, artifact_uri: str | None = None) -> dict[str, Any]:
    """The SARIF log as a JSON-ready dict."""
    rules = [_rule(meta) for meta in ALL_RULES] + _extra_rules(report.findings)
    index = {rule["id"]: i for i, rule in enumerate(rules)}
    server = report.server.name or report.target.name
    seen: dict[tuple[str, str | None, str], int] = {}
    results = []
    for finding in report.findings:
        key = (finding.rule_id, finding.tool, _NUMBERS.sub("#", finding.message))
        seen[key] = seen.get(key, -1) + 1
        results.append(_result(finding, index, server, artifact_uri, seen[key]))
    run: dict[str, Any] = {
        "tool": {"driver": {"name": report.scanner.name, "version": report.scanner.version, "rules": rules}},
        "results": results,
        "properties": {"verdict": report.verdict, "score": report.score.value if report.score else None,
                       "target": report.target.requested},
    }
    if artifact_uri is not None:
        run["artifacts"] = [{"location": {"uri": artifact_uri}}]
    return {"$schema": SARIF_SCHEMA, "version": SARIF_VERSION, "runs": [run]}
