"""The envelope rules, read once from scanner/plugins/rules.toml (ids and tiers are mcp-vet 0.15's)."""

from __future__ import annotations

import tomllib
from dataclasses import dataclass
from functools import cache
from importlib import resources

TIERS = ("FATAL", "BREAKING", "DEPRECATED", "TOLERATED", "INFO")  # most severe first
FAILING = ("FATAL", "BREAKING")  # a conformant client rejects the plugin or the server entry: exit 1


@dataclass(frozen=True)
class PluginRule:
    id: str
    tier: str
    section: str
    title: str
    detects: str
    fix: str


@cache
def plugin_rules() -> dict[str, PluginRule]:
    text = resources.files("scanner.plugins").joinpath("rules.toml").read_text("utf-8")
    rules = {}
    for entry in tomllib.loads(text)["rule"]:
        rule = PluginRule(**entry)
        if rule.tier not in TIERS:
            raise ValueError(f"rules.toml: {rule.id} has tier {rule.tier!r}, not one of {TIERS}")
        rules[rule.id] = rule
    return rules


def rank(tier: str) -> int:
    """0 for FATAL … 4 for INFO: sorts the most severe first."""
    return TIERS.index(tier)
