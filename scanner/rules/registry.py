"""The one registry of rules: every rule of every family, loaded from `rules.toml` (each rule listed once there),
found by id or name with one `lookup`. `--explain`, the SARIF rule catalogue, config `disable`/`ignore` and
`mcp-sandbox rules` all read it; the code that produces a rule's findings asks it for the rule with `rule(id)`."""

from __future__ import annotations

import re
from importlib.resources import files
from types import MappingProxyType
from typing import Any, get_args

from scanner.parsed_toml import read_toml
from scanner.report.model import Category
from scanner.report.severity import Severity
from scanner.rules.model import Family, Rule, family_of

CATALOGUE = "rules.toml"
_REQUIRED = ("id", "name", "severity", "category", "why", "fix", "docs")
_OPTIONAL = ("example", "reference")
_KEBAB = re.compile(r"[a-z0-9]+(-[a-z0-9]+)*")


class CatalogueError(ValueError):
    """rules.toml is malformed: a programming error, caught by the test suite."""


def _rule(entry: dict[str, Any]) -> Rule:
    unknown = set(entry) - {*_REQUIRED, *_OPTIONAL}
    missing = [key for key in _REQUIRED if not isinstance(entry.get(key), str) or not entry[key]]
    if unknown or missing:
        raise CatalogueError(f"rule {entry.get('id')!r}: unknown keys {sorted(unknown)}, missing {missing}")
    if not _KEBAB.fullmatch(entry["name"]) or entry["category"] not in get_args(Category):
        raise CatalogueError(f"rule {entry['id']}: bad name {entry['name']!r} or category {entry['category']!r}")
    try:
        family_of(entry["id"])
    except ValueError:
        raise CatalogueError(f"rule {entry['id']}: the id's prefix names no family") from None
    return Rule(id=entry["id"], name=entry["name"], severity=Severity(entry["severity"]), category=entry["category"],
                why=entry["why"], fix=entry["fix"], docs=entry["docs"], example=entry.get("example", ""),
                reference=entry.get("reference", ""))


def load_rules(catalogue: dict[str, Any]) -> tuple[Rule, ...]:
    """Every rule of a parsed catalogue, checked: each field present, ids and names unique."""
    rules = tuple(_rule(entry) for entry in catalogue.get("rule", []))
    for key in ("id", "name"):
        values = [getattr(rule, key) for rule in rules]
        repeated = sorted({value for value in values if values.count(value) > 1})
        if repeated:
            raise CatalogueError(f"rule {key}s listed more than once: {', '.join(repeated)}")
    return rules


ALL_RULES: tuple[Rule, ...] = load_rules(read_toml(files("scanner.rules"), CATALOGUE))
_BY_KEY = MappingProxyType({**{r.id.lower(): r for r in ALL_RULES}, **{r.name: r for r in ALL_RULES}})


def lookup(key: str) -> Rule | None:
    """The rule with this id (S1, P3, B2, I7, FX; case-insensitive) or kebab-case name, or None."""
    return _BY_KEY.get(key.strip().lower())


def rule(rule_id: str) -> Rule:
    """The registered rule with this id; KeyError for an id the catalogue does not list (a programming error)."""
    found = lookup(rule_id)
    if found is None or found.id != rule_id:
        raise KeyError(f"rule {rule_id!r} is not in {CATALOGUE}")
    return found


def rules_of(family: Family) -> tuple[Rule, ...]:
    """The rules of one family, in catalogue order."""
    return tuple(r for r in ALL_RULES if r.family is family)
