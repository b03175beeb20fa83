"""I9: a package name a small edit away from a well-known MCP server package that is not that package."""

from __future__ import annotations

import functools
import json
from dataclasses import dataclass
from importlib import resources
from pathlib import Path

from scanner.provenance.model import EcosystemName
from scanner.ecosystems.base import Ecosystem
from scanner.ecosystems.registry import ecosystem as ecosystem_named
from scanner.provenance.names import comparison_name, edit_distance
from scanner.rules.provenance import finding
from scanner.report.model import Finding

# Names shorter than this (in comparison form) are not checked: too many honest near neighbours.
MIN_CHECKED_LENGTH = 5
# How many distinct (list, name) answers are remembered: a config repeats the same packages many times.
MEMO_SIZE = 4096


def load_well_known(path: Path | None = None) -> dict[str, list[str]]:
    """ecosystem → well-known package names (shipped scanner/data/well_known_servers.json unless a path is given)."""
    if path is None:
        return {eco: list(names) for eco, names in _shipped_well_known().items()}
    return _parse(path.read_text("utf-8"))


@functools.cache
def _shipped_well_known() -> dict[str, tuple[str, ...]]:
    """The shipped list, read once per process (package data; callers get copies from load_well_known)."""
    text = resources.files("scanner.data").joinpath("well_known_servers.json").read_text("utf-8")
    return {eco: tuple(names) for eco, names in _parse(text).items()}


def _parse(text: str) -> dict[str, list[str]]:
    data = json.loads(text)
    return {"npm": list(data.get("npm", [])), "pypi": list(data.get("pypi", []))}


@dataclass(frozen=True, eq=False)
class _Compared:
    """One ecosystem's well-known names with their comparison forms, computed once (identity-hashed)."""

    normalized: frozenset[str]
    forms: tuple[tuple[str, str, str | None], ...]  # (name, comparison form, comparison form without npm scope)


@functools.lru_cache(maxsize=64)
def _compared(ecosystem: Ecosystem, known: tuple[str, ...]) -> _Compared:
    """Keyed on the ecosystem object itself, so a registry that swaps an ecosystem never sees another's forms."""
    forms = tuple((real, comparison_name(real), _bare_form(ecosystem.name, real)) for real in known)
    return _Compared(frozenset(ecosystem.normalize(k) for k in known), forms)


def _bare_form(ecosystem: str, real: str) -> str | None:
    if ecosystem == "npm" and real.startswith("@") and "/" in real:
        return comparison_name(real.split("/", 1)[1])
    return None


def allowed_distance(length: int) -> int:
    """How many edits still count as "close" for a name of this length (comparison form)."""
    if length < MIN_CHECKED_LENGTH:
        return 0
    return 1 if length < 12 else 2


def typosquat_finding(ecosystem: EcosystemName, name: str,
                      well_known: dict[str, list[str]] | None = None) -> Finding | None:
    """I9 when name is close to (or a scope-less copy of) a well-known package but is not it; None otherwise."""
    lists = _shipped_well_known() if well_known is None else well_known
    eco = ecosystem_named(ecosystem)
    normalized = eco.normalize(name)  # PyPI treats -, _, . and case as the same name
    known = _compared(eco, tuple(lists.get(ecosystem, ())))
    match = None if normalized in known.normalized else _nearest(known, name)
    if match is None:
        return None
    real, reason = match
    return finding("I9", f"{ecosystem} package {name} looks like the well-known {real} ({reason}).",
                   evidence=f"{name} vs {real}: {reason}")


@functools.lru_cache(maxsize=MEMO_SIZE)
def _nearest(known: _Compared, name: str) -> tuple[str, str] | None:
    """The well-known name this one is closest to (fewest edits; the list's order breaks ties), with why; None when
    it is close to none."""
    target = comparison_name(name)
    scoped = name.startswith("@")
    best: tuple[int, str, str] | None = None
    for real, real_form, bare_form in known.forms:
        close = _closeness(target, scoped, real_form, bare_form)
        if close is not None and (best is None or close[0] < best[0]):
            best = (close[0], real, close[1])
    return (best[1], best[2]) if best is not None else None


def _closeness(target: str, scoped: bool, real_form: str, bare_form: str | None) -> tuple[int, str] | None:
    """How many edits apart (0 for the same name in another spelling), with why; None when not close."""
    if bare_form is not None and not scoped and bare_form == target and len(target) >= MIN_CHECKED_LENGTH:
        return 0, "the same name without the official scope"
    if real_form == target:
        return 0, "differs only in separators or case"
    limit = allowed_distance(len(real_form))
    if limit == 0:
        return None
    distance = edit_distance(target, real_form, limit)
    if distance <= limit:
        return distance, f"{distance} edit{'s' if distance > 1 else ''} away"
    return None
