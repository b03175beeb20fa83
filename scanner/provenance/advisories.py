"""Known advisories for the installed release, from a pluggable OSV source.

Sources: a local OSV export directory (the JSON files of https://osv.dev's per-ecosystem exports, searched
recursively), or the OSV query API (opt-in: it is a third-party service). With no source configured, or one that
cannot answer, the check is `unavailable` ("not checked"): never "no known vulnerabilities" when nothing was asked.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Protocol

import httpx

from scanner.ecosystems.registry import ecosystem as ecosystem_named
from scanner.provenance.model import Check, EcosystemName
from scanner.provenance.names import comparison_name
from scanner.rules.provenance import finding
from scanner.report.model import Finding

OSV_QUERY_URL = "https://api.osv.dev/v1/query"
MAX_ADVISORY_BYTES = 4 * 1024 * 1024
MAX_OSV_PAGES = 20  # OSV pages hold up to 1,000 advisories each


class SourceUnavailable(Exception):
    """The advisory source could not answer; the message says why."""


class AdvisorySource(Protocol):
    description: str

    def advisories(self, ecosystem: EcosystemName, name: str) -> list[dict[str, Any]]: ...


@dataclass
class LocalOsvExport:
    """Advisories from OSV JSON files in a folder (any depth), indexed by ecosystem and package name on first use."""

    directory: Path
    _index: dict[tuple[str, str], list[dict[str, Any]]] | None = field(default=None, repr=False)

    @property
    def description(self) -> str:
        return f"local OSV export {self.directory}"

    def advisories(self, ecosystem: EcosystemName, name: str) -> list[dict[str, Any]]:
        """This package's advisories; SourceUnavailable when the export holds none of its ecosystem at all (still
        zipped, another ecosystem's): asking it would say "none" about a package it was never able to list."""
        if self._index is None:
            self._index = self._load()
        osv_name = ecosystem_named(ecosystem).osv_name
        if not any(eco == osv_name for eco, _ in self._index):
            raise SourceUnavailable(f"{self.directory} holds no {osv_name} advisories (expected the unzipped OSV "
                                    f"export of {osv_name})")
        return self._index.get((osv_name, comparison_name(name)), [])

    def _load(self) -> dict[tuple[str, str], list[dict[str, Any]]]:
        if not self.directory.is_dir():
            raise SourceUnavailable(f"{self.directory} is not a folder of OSV JSON files")
        index: dict[tuple[str, str], list[dict[str, Any]]] = {}
        for path in sorted(self.directory.rglob("*.json")):
            if path.stat().st_size > MAX_ADVISORY_BYTES:
                continue
            try:
                advisory = json.loads(path.read_text("utf-8"))
            except (ValueError, UnicodeDecodeError, RecursionError):
                continue
            for affected in _objects(_object(advisory).get("affected")):
                package = _object(affected.get("package"))
                key = (str(package.get("ecosystem", "")), comparison_name(str(package.get("name", ""))))
                index.setdefault(key, []).append(advisory)
        return index


@dataclass
class OsvApi:
    """The OSV query API (opt-in), asked through the scan's registry client (its CA bundle, upstream proxy and host
    allowlist, which then holds the API's host: scanner.registry.endpoints)."""

    client: httpx.Client
    url: str = OSV_QUERY_URL

    @property
    def description(self) -> str:
        return f"OSV API {self.url}"

    def advisories(self, ecosystem: EcosystemName, name: str) -> list[dict[str, Any]]:
        """Every page of the answer: OSV paginates (`next_page_token`), and a first page read as the whole answer
        would make an advisory on a later page "none". Past MAX_OSV_PAGES the answer is incomplete: unavailable."""
        body: dict[str, Any] = {"package": {"name": name, "ecosystem": ecosystem_named(ecosystem).osv_name}}
        found: list[dict[str, Any]] = []
        for _ in range(MAX_OSV_PAGES):
            vulns, token = self._page(body)
            found.extend(vulns)
            if not token:
                return found
            body["page_token"] = token
        raise SourceUnavailable(f"{self.url} answered more than {MAX_OSV_PAGES} pages; the rest was not read")

    def _page(self, body: dict[str, Any]) -> tuple[list[dict[str, Any]], str | None]:
        """One page: its advisories and the token of the next page (None on the last)."""
        try:
            response = self.client.post(self.url, json=body)
        except httpx.HTTPError as exc:
            raise SourceUnavailable(f"{self.url} did not answer ({type(exc).__name__})") from exc
        if response.status_code != 200:
            raise SourceUnavailable(f"{self.url} answered HTTP {response.status_code}")
        try:
            data = response.json()
        except (ValueError, RecursionError) as exc:  # not JSON, or nested past the parser's depth
            raise SourceUnavailable(f"{self.url} sent an unreadable answer") from exc
        vulns = data.get("vulns") or [] if isinstance(data, dict) else None
        if not isinstance(vulns, list) or not all(isinstance(v, dict) for v in vulns):
            raise SourceUnavailable(f"{self.url} sent an unreadable answer (no list of advisory objects)")
        token = data.get("next_page_token")
        return vulns, str(token) if token else None


def check_advisories(source: AdvisorySource | None, ecosystem: EcosystemName, name: str,
                     version: str) -> tuple[Check, list[Finding]]:
    """The `advisories` check for name@version, with an I10 finding per advisory that lists the version."""
    if source is None:
        return Check(name="advisories", outcome="unavailable", rule_id="I10",
                     evidence="no advisory source configured (--advisories DIR for a local OSV export, or osv)"), []
    try:
        candidates = source.advisories(ecosystem, name)
    except SourceUnavailable as exc:
        return Check(name="advisories", outcome="unavailable", rule_id="I10", evidence=str(exc)), []
    hits = [a for a in candidates if affects(a, ecosystem, name, version)]
    if not hits:
        return Check(name="advisories", outcome="verified", rule_id="I10",
                     evidence=f"{source.description}: no advisory lists {name}@{version}"), []
    ids = ", ".join(str(a.get("id", "?")) for a in hits)
    findings = [finding("I10", f"{name}@{version} is affected by {a.get('id', '?')}: "
                               f"{str(a.get('summary') or a.get('details') or '')[:200]}",
                        evidence=str(a.get("id", "?")),
                        severity="error" if str(a.get("id", "")).startswith("MAL-") else None)
                for a in hits]
    return Check(name="advisories", outcome="failed", rule_id="I10", evidence=f"{source.description}: {ids}"), findings


def affects(advisory: dict[str, Any], ecosystem: EcosystemName, name: str, version: str) -> bool:
    """Whether an OSV advisory lists name@version: in `versions`, or inside an ECOSYSTEM/SEMVER range."""
    for affected in _objects(advisory.get("affected")):
        package = _object(affected.get("package"))
        if package.get("ecosystem") != ecosystem_named(ecosystem).osv_name:
            continue
        if comparison_name(str(package.get("name", ""))) != comparison_name(name):
            continue
        versions = affected.get("versions")
        if isinstance(versions, list) and version in versions:  # a string would match any substring
            return True
        if any(_in_range(r, ecosystem, version) for r in _objects(affected.get("ranges"))):
            return True
    return False


def _object(value: Any) -> dict[str, Any]:
    """An advisory's field that must be an object (the source's data: any other shape holds nothing)."""
    return value if isinstance(value, dict) else {}


def _objects(value: Any) -> list[dict[str, Any]]:
    """The objects of an advisory's field that must be a list of objects (anything else in it is skipped)."""
    return [item for item in value if isinstance(item, dict)] if isinstance(value, list) else []


def _key(ecosystem: EcosystemName, version: str) -> Any:
    """A sortable version, or None when it cannot be parsed ("0" is the start of time in OSV)."""
    if version == "0":
        return (0,)
    parsed = ecosystem_named(ecosystem).version_key(version)
    return (1, parsed) if parsed is not None else None


def _in_range(version_range: dict[str, Any], ecosystem: EcosystemName, version: str) -> bool:
    if version_range.get("type") not in ("ECOSYSTEM", "SEMVER"):
        return False
    target = _key(ecosystem, version)
    if target is None:
        return False
    affected = False
    events = [e for e in version_range.get("events") or [] if isinstance(e, dict)]
    keyed = []
    for event in events:
        kind, value = next(iter(event.items()), (None, None))
        key = _key(ecosystem, str(value)) if value is not None else None
        if key is not None and kind in ("introduced", "fixed", "last_affected", "limit"):
            keyed.append((key, kind))
    for key, kind in sorted(keyed, key=lambda pair: pair[0]):
        if kind == "introduced" and target >= key:
            affected = True
        elif kind == "fixed" and target >= key:
            affected = False
        elif kind == "last_affected" and target > key:
            affected = False
    return affected
