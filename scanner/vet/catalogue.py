"""The `vet` rules, loaded once from scanner/vet/rules.toml (each rule listed there once, with mcp-vet's id): tier,
the specification sentence it rests on (for an ADVISORY, the SDK migration guide's), what it matches, the migrated
form and the dated specification page (an ADVISORY's is its SDK's migration guide)."""

from __future__ import annotations

from dataclasses import dataclass
from importlib.resources import files
from types import MappingProxyType
from typing import Any

from scanner.parsed_toml import read_toml
from scanner.vet.model import Tier

CATALOGUE = "rules.toml"
_FIELDS = ("id", "tier", "group", "title", "quote", "detects", "after", "doc")
# Where an ADVISORY (an SDK migration, not the protocol) may point: the SDKs' v2 migration guides and release notes.
SDK_DOCS = ("https://py.sdk.modelcontextprotocol.io/v2/migration/",
            "https://ts.sdk.modelcontextprotocol.io/v2/migration/", "https://github.com/modelcontextprotocol/python-sdk/releases")


class VetCatalogueError(ValueError):
    """rules.toml is malformed: a programming error, caught by the test suite."""


@dataclass(frozen=True)
class VetRule:
    id: str
    tier: Tier
    group: str
    title: str
    quote: str
    detects: str
    after: str
    doc: str


def _rule(entry: dict[str, object]) -> VetRule:
    if set(entry) != set(_FIELDS) or not all(isinstance(entry[k], str) and entry[k] for k in _FIELDS):
        raise VetCatalogueError(f"vet rule {entry.get('id')!r}: needs exactly the fields {', '.join(_FIELDS)}")
    doc = str(entry["doc"])
    if entry["tier"] == Tier.ADVISORY.value:
        if not doc.startswith(SDK_DOCS):
            raise VetCatalogueError(f"vet rule {entry['id']}: an advisory's doc must be an SDK migration page")
    elif "/draft/" in doc or "/specification/2026-07-28/" not in doc:
        raise VetCatalogueError(f"vet rule {entry['id']}: doc must be a dated 2026-07-28 specification page")
    return VetRule(**{k: (Tier(entry[k]) if k == "tier" else str(entry[k])) for k in _FIELDS})  # type: ignore[arg-type]


def load(catalogue: dict[str, Any]) -> tuple[VetRule, ...]:
    """Every rule of the parsed catalogue, checked."""
    rules = tuple(_rule(entry) for entry in catalogue.get("rule", []))
    ids = [r.id for r in rules]
    if len(set(ids)) != len(ids):
        raise VetCatalogueError("a vet rule id is listed more than once")
    return rules


VET_RULES: tuple[VetRule, ...] = load(read_toml(files("scanner.vet"), CATALOGUE))
BY_ID = MappingProxyType({r.id: r for r in VET_RULES})


def vet_rule(rule_id: str) -> VetRule:
    """The registered rule; KeyError for an id rules.toml does not list (a programming error)."""
    return BY_ID[rule_id]
