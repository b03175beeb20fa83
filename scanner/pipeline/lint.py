"""Stage 8: the static rules (S1-S14) on the live definitions exactly as served (uncapped: the rules measure real
sizes). Nothing to lint when the session never started."""

from __future__ import annotations

import json

from scanner.pipeline.inventory import Inventory
from scanner.report.model import Finding
from scanner.rules.static.engine import run_rules


def lint(inventory: Inventory) -> list[Finding]:
    if not inventory.connected:
        return []
    payload = len(json.dumps({"tools": inventory.tools}, ensure_ascii=False).encode())
    server_info = {"name": inventory.server.get("name"), "version": inventory.server.get("version")}
    return run_rules(inventory.tools, inventory.prompts, inventory.server.get("instructions"), server_info,
                     payload_bytes=payload)
