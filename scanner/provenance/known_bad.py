"""I8: known-bad releases, refused before anything is installed or launched. The list is data."""

from __future__ import annotations

import functools
import json
from collections import defaultdict
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from importlib import resources
from pathlib import Path

from scanner.provenance.model import EcosystemName
from scanner.provenance.names import comparison_name
from scanner.rules.provenance import finding
from scanner.ecosystems.registry import ecosystem as ecosystem_named
from scanner.report.model import Finding


@dataclass(frozen=True)
class BadRelease:
    ecosystem: EcosystemName
    name: str
    version: str  # normalised
    reason: str


KnownBadIndex = Mapping[tuple[str, str], tuple[BadRelease, ...]]


def load_known_bad(path: Path | None = None) -> list[BadRelease]:
    """Read the known-bad list (the shipped scanner/data/known_bad.json unless a path is given)."""
    if path is None:
        return list(_shipped_known_bad())
    return _parse(path.read_text("utf-8"))


@functools.cache
def _shipped_known_bad() -> tuple[BadRelease, ...]:
    """The shipped list, read and parsed once per process (it is package data and never changes under us)."""
    return tuple(_parse(resources.files("scanner.data").joinpath("known_bad.json").read_text("utf-8")))


@functools.cache
def _shipped_index() -> KnownBadIndex:
    return index_known_bad(_shipped_known_bad())


def _parse(text: str) -> list[BadRelease]:
    data = json.loads(text)
    out: list[BadRelease] = []
    for entry in data["releases"]:
        eco = entry["ecosystem"]
        for version in entry["versions"]:
            canonical = ecosystem_named(eco).normalise_version(version) or version
            out.append(BadRelease(eco, entry["name"], canonical, entry["reason"]))
    return out


def index_known_bad(releases: Iterable[BadRelease]) -> KnownBadIndex:
    """(ecosystem, comparison name) → its known-bad releases, in list order: one dict lookup per package."""
    index: defaultdict[tuple[str, str], list[BadRelease]] = defaultdict(list)
    for release in releases:
        index[(release.ecosystem, comparison_name(release.name))].append(release)
    return {key: tuple(value) for key, value in index.items()}


def known_bad_finding(ecosystem: EcosystemName, name: str, version_spec: str,
                      known_bad: list[BadRelease] | None = None) -> Finding | None:
    """I8 when name@version_spec is, or could resolve to, a known-bad release; None otherwise.

    version_spec is what the user asked for: an exact version, a range, a tag or "" (any). A spec that could still
    resolve to a bad release (a range containing it, a tag, no version) is refused too.
    """
    index = _shipped_index() if known_bad is None else index_known_bad(known_bad)
    listed = index.get((ecosystem, comparison_name(name)), ())
    hits = [b for b in listed if ecosystem_named(ecosystem).could_resolve_to(version_spec, b.version)]
    if not hits:
        return None
    versions = ", ".join(b.version for b in hits)
    spec_shown = version_spec.strip() or "(no version: any)"
    exact = ecosystem_named(ecosystem).exact_version(version_spec)
    how = "is" if exact else "could resolve to"
    return finding(
        "I8",
        f"{ecosystem} package {name} {spec_shown} {how} a known-bad release ({versions}): {hits[0].reason}.",
        evidence=f"{ecosystem}:{hits[0].name} known-bad versions {versions}; requested {spec_shown}",
    )
