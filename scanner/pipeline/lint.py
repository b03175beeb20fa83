"""Stage 8: the static rules (S1-S14) on the live definitions exactly as served (uncapped: the rules measure real
sizes), the tools the listing rejected included (each also gets an S3 error naming the problem). Nothing to lint
when the session never started."""

from __future__ import annotations

import json

from scanner.pipeline.inventory_model import Inventory
from scanner.report.model import Finding
from scanner.rules.static.engine import run_rules
from scanner.rules.static.s03_parameter_schema import rejected_finding


def lint(inventory: Inventory) -> list[Finding]:
    if not inventory.connected:
        return []
    payload = len(json.dumps({"tools": inventory.tools}, ensure_ascii=False).encode())
    server_info = {"name": inventory.server.get("name"), "version": inventory.server.get("version")}
    rejected = inventory.rejected_tools
    findings = run_rules([*inventory.tools, *(item.definition for item in rejected)], inventory.prompts,
                         inventory.server.get("instructions"), server_info, payload_bytes=payload,
                         resources=inventory.resources, resource_templates=inventory.resource_templates)
    for index, item in enumerate(rejected, start=len(inventory.tools)):
        name = item.definition.get("name") if isinstance(item.definition, dict) else None
        findings.append(rejected_finding(name if isinstance(name, str) and name else f"<tool #{index}>", item.problem))
    return findings
