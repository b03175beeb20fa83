"""I8: known-bad releases, refused before anything is installed or launched. The list is data.

A name the shipped list does not hold is passed on its names alone (`_shipped_names`): the versions are normalised by
the ecosystems' grammars only when a listed package is asked for."""

from __future__ import annotations

import functools
import json
from collections import defaultdict
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from importlib import resources
from pathlib import Path
from typing import TYPE_CHECKING, Any

from scanner.provenance.names import comparison_name

if TYPE_CHECKING:  # imported on a hit: the CLI refuses a known-bad target before its head start begins, and a name
    # not on the list needs neither the version grammars (the ecosystems, their provenance checks) nor the report
    from scanner.provenance.model import EcosystemName
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
def _shipped_document() -> dict[str, Any]:
    """The shipped list's JSON, read once per process (it is package data and never changes under us)."""
    data: dict[str, Any] = json.loads(resources.files("scanner.data").joinpath("known_bad.json").read_text("utf-8"))
    return data


@functools.cache
def _shipped_known_bad() -> tuple[BadRelease, ...]:
    """The shipped list, parsed once per process."""
    return tuple(_releases(_shipped_document()))


@functools.cache
def _shipped_names() -> frozenset[tuple[str, str]]:
    """(ecosystem, comparison name) of every package on the shipped list."""
    return frozenset((entry["ecosystem"], comparison_name(entry["name"])) for entry in _shipped_document()["releases"])


@functools.cache
def _shipped_index() -> KnownBadIndex:
    return index_known_bad(_shipped_known_bad())


def _parse(text: str) -> list[BadRelease]:
    return _releases(json.loads(text))


def _releases(data: dict[str, Any]) -> list[BadRelease]:
    from scanner.ecosystems.registry import ecosystem as ecosystem_named

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
    if known_bad is None and (ecosystem, comparison_name(name)) not in _shipped_names():
        return None
    from scanner.ecosystems.registry import ecosystem as ecosystem_named
    from scanner.rules.provenance import finding

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
