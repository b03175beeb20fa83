"""Every rule the scanner can report — static (S), probe (P), behaviour (B), provenance (I) — by id or name."""

from __future__ import annotations

from scanner.rules.behavior import RULES as BEHAVIOR_RULES
from scanner.rules.probe import RULES as PROBE_RULES
from scanner.rules.provenance import RULES as PROVENANCE_RULES
from scanner.rules.model import Rule
from scanner.rules.static.catalog import RULES as STATIC_RULES

ALL_RULES: tuple[Rule, ...] = (*STATIC_RULES, *PROBE_RULES.values(), *BEHAVIOR_RULES.values(),
                               *PROVENANCE_RULES.values())
_BY_KEY: dict[str, Rule] = {**{r.id.lower(): r for r in ALL_RULES}, **{r.name: r for r in ALL_RULES}}


def lookup(key: str) -> Rule | None:
    """The rule with this id (S1, P3, B2, I7; case-insensitive) or kebab-case name, or None."""
    return _BY_KEY.get(key.strip().lower())
