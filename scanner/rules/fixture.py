"""The fixture rule FX: a probe of the user's --fixtures file that the scanner refused to call."""

from __future__ import annotations

from scanner.report.model import Finding
from scanner.rules.registry import rule

RULE = rule("FX")


def refusal_finding(tool: str, label: str, reason: str) -> Finding:
    """FX for a fixture probe that was not called (its tool is not served, or its arguments fail the schema)."""
    return RULE.finding(tool, f"Fixture probe '{label}' was not called: {reason}.")
