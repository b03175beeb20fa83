"""The envelope as text (terminal), JSON and SARIF 2.1.0 (each finding's spec section in properties.section)."""

from __future__ import annotations

from collections import Counter
from pathlib import Path
from typing import Any

from scanner import __version__
from scanner.plugins.catalogue import FAILING, TIERS, plugin_rules
from scanner.plugins.model import EnvelopeResult
from scanner.report.locations import artifact_uri_for

SARIF_SCHEMA = "https://json.schemastore.org/sarif-2.1.0.json"
SPEC_URL = "https://agent-plugins.org/specification"
LEVELS = {"FATAL": "error", "BREAKING": "error", "DEPRECATED": "warning", "TOLERATED": "note", "INFO": "note"}


def terminal_lines(result: EnvelopeResult) -> list[str]:
    name = result.name or "(unnamed)"
    lines = [f"plugin {name}: {len(result.servers)} server(s) in mcp.json" if result.has_mcp_json
             else f"plugin {name}: no mcp.json (no MCP servers; that is valid)",
             f"skills: {result.skills}"]
    lines += [f"not vetted: {u.file}: {u.what}" for u in result.unvetted]
    for finding in result.sorted_findings():
        lines.append(f"{finding.file}:{finding.line}  {finding.tier:<10} {finding.rule_id} §{finding.cited}  "
                     f"{finding.message}")
    lines.append(summary(result))
    return lines


def summary(result: EnvelopeResult) -> str:
    counts = Counter(f.tier for f in result.findings)
    if not counts:
        return "envelope: no finding"
    tiers = ", ".join(f"{counts[t]} {t}" for t in TIERS if counts[t])
    verdict = "a conformant client rejects the plugin or a server entry" if result.failing else "loads"
    return f"envelope: {len(result.findings)} finding(s): {tiers} ({verdict})"


def as_json(result: EnvelopeResult) -> dict[str, Any]:
    return {"spec": "Agent Plugins 1.0.0", **result.as_json(), "failing": result.failing}


def artifact_location(root: Path, file: str) -> dict[str, str]:
    """A plugin file as code scanning finds it: relative to the working directory (the checkout: %SRCROOT%), not to
    the plugin folder, which is seldom the repository's root; an absolute `file:` URI when outside it."""
    uri = artifact_uri_for(str(root.resolve() / file))
    return {"uri": uri} if uri.startswith("file:") else {"uri": uri, "uriBaseId": "%SRCROOT%"}


def to_sarif(result: EnvelopeResult) -> dict[str, Any]:
    rules = list(plugin_rules().values())
    index = {rule.id: i for i, rule in enumerate(rules)}
    driver = {"name": "mcp-sandbox plugin", "version": __version__, "informationUri": SPEC_URL,
              "rules": [{"id": r.id, "name": r.title, "shortDescription": {"text": r.title},
                         "fullDescription": {"text": r.detects}, "help": {"text": f"Fix: {r.fix}"},
                         "helpUri": SPEC_URL, "defaultConfiguration": {"level": LEVELS[r.tier]},
                         "properties": {"tier": r.tier, "section": r.section}} for r in rules]}
    results = [{"ruleId": f.rule_id, "ruleIndex": index[f.rule_id], "level": LEVELS[f.tier],
                "message": {"text": f.message},
                "locations": [{"physicalLocation": {"artifactLocation": artifact_location(result.root, f.file),
                                                    "region": {"startLine": f.line}}}],
                "properties": {"tier": f.tier, "section": f.cited, "failing": f.tier in FAILING}}
               for f in result.sorted_findings()]
    return {"$schema": SARIF_SCHEMA, "version": "2.1.0", "runs": [{"tool": {"driver": driver}, "results": results}]}
