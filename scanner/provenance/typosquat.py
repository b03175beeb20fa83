"""I9: a package name a small edit away from a well-known MCP server package that is not that package."""

from __future__ import annotations

import json
from importlib import resources
from pathlib import Path

from scanner.provenance.model import EcosystemName
from scanner.ecosystems.registry import ecosystem as ecosystem_named
from scanner.provenance.names import comparison_name, edit_distance
from scanner.rules.provenance import finding
from scanner.report.model import Finding

# Names shorter than this (in comparison form) are not checked: too many honest near neighbours.
MIN_CHECKED_LENGTH = 5


def load_well_known(path: Path | None = None) -> dict[str, list[str]]:
    """ecosystem → well-known package names (shipped scanner/data/well_known_servers.json unless a path is given)."""
    text = path.read_text("utf-8") if path else resources.files("scanner.data").joinpath(
        "well_known_servers.json").read_text("utf-8")
    data = json.loads(text)
    return {"npm": list(data.get("npm", [])), "pypi": list(data.get("pypi", []))}


def allowed_distance(length: int) -> int:
    """How many edits still count as "close" for a name of this length (comparison form)."""
    if length < MIN_CHECKED_LENGTH:
        return 0
    return 1 if length < 12 else 2


def typosquat_finding(ecosystem: EcosystemName, name: str,
                      well_known: dict[str, list[str]] | None = None) -> Finding | None:
    """I9 when name is close to (or a scope-less copy of) a well-known package but is not it; None otherwise."""
    known = (well_known if well_known is not None else load_well_known()).get(ecosystem, [])
    if _is_same_package(ecosystem, name, known):
        return None
    target = comparison_name(name)
    for real in known:
        reason = _closeness(ecosystem, name, target, real)
        if reason:
            return finding("I9", f"{ecosystem} package {name} looks like the well-known {real} ({reason}).",
                           evidence=f"{name} vs {real}: {reason}")
    return None


def _is_same_package(ecosystem: EcosystemName, name: str, known: list[str]) -> bool:
    normalize = ecosystem_named(ecosystem).normalize  # PyPI treats -, _, . and case as the same name
    return normalize(name) in {normalize(k) for k in known}


def _closeness(ecosystem: EcosystemName, name: str, target: str, real: str) -> str | None:
    if ecosystem == "npm" and real.startswith("@") and "/" in real and not name.startswith("@"):
        bare = real.split("/", 1)[1]
        if comparison_name(bare) == target and len(target) >= MIN_CHECKED_LENGTH:
            return "the same name without the official scope"
    real_form = comparison_name(real)
    if real_form == target:
        return "differs only in separators or case"
    limit = allowed_distance(len(real_form))
    if limit == 0:
        return None
    distance = edit_distance(target, real_form, limit)
    if distance <= limit:
        return f"{distance} edit{'s' if distance > 1 else ''} away"
    return None
