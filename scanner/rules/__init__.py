"""Static rules S1-S14 on tool definitions. `run_rules(...)` is the entry point; `RULES` is the catalogue."""

from scanner.rules.catalog import RULES, Rule, lookup
from scanner.rules.engine import run_rules

__all__ = ["RULES", "Rule", "lookup", "run_rules"]
