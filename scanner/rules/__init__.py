"""Static rules S1-S14 on tool definitions. `run_rules(...)` is the entry point; `RULES` is the catalogue."""

from scanner.rules.catalog import RULES, RuleMeta, lookup
from scanner.rules.engine import run_rules

__all__ = ["RULES", "RuleMeta", "lookup", "run_rules"]
