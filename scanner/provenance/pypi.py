"""PyPI checks of one resolved release: JSON API vs PEP 691 hashes and downloaded/installed bytes (I2),
yanked (I6), sdist-only (I5), PEP 740 provenance (I4, verified offline by pep740) and its Trusted Publisher's
repository against the one the project declares (I4, pypi_repository)."""

from __future__ import annotations

import hashlib
import re
from collections.abc import Mapping
from typing import Any
from urllib.parse import urljoin, urlsplit

import httpx

from packaging.utils import InvalidSdistFilename, InvalidWheelFilename, canonicalize_name, parse_sdist_filename, \
    parse_wheel_filename
from packaging.version import InvalidVersion, Version

from scanner.registry.client import MAX_ARTIFACT_BYTES, Fetched, fetch
from scanner.registry.endpoints import DEFAULT_ENDPOINTS, RegistryEndpoints
from scanner.provenance.model import Check, Dependency, DependencyTree, Outcome, PackageProvenance, Pins
from scanner.provenance.versions import pypi_normalise
from scanner.provenance.pep740 import Pep740Result, merged_publishers, verify_provenance
from scanner.provenance.pypi_repository import publisher_repository_check

SIMPLE_JSON = "application/vnd.pypi.simple.v1+json"
MAX_ATTESTED_FILES = 100  # provenance fetched and verified per file of a release


def check_pypi_package(client: httpx.Client, name: str, version: str, *,
                       endpoints: RegistryEndpoints = DEFAULT_ENDPOINTS, installed: Mapping[str, str] | None = None,
                       download: bool = True) -> PackageProvenance:
    """Check name==version. installed: file name → sha256 of what was installed (from the install report); when
    None and download is set, the preferred file (a pure wheel, else the sdist) is fetched and hashed."""
    result = PackageProvenance(ecosystem="pypi", name=name, version=version, pins=Pins(version=version))
    project = canonicalize_name(name)
    json_url = endpoints.pypi_release(project, version)
    got_json = fetch(client, json_url, accept="application/json")
    release = _release(got_json)
    if release is None and got_json.status == 404:  # some mirrors serve only the project document
        json_url = endpoints.pypi_project(project)
        got_json = fetch(client, json_url, accept="application/json")
        release = _release_from_project(got_json, version)
    got_simple = fetch(client, endpoints.pypi_simple_page(project), accept=SIMPLE_JSON)
    simple = _simple_files(got_simple)
    if release is None:
        reason = got_json.reason or f"the JSON API lists no release {version}"
        result.checks = [Check(name=n, outcome="unavailable", evidence=reason, rule_id=r)
                         for n, r in (("index-hashes", "I2"), ("file-hashes", "I2"), ("yanked", "I6"),
                                      ("wheel", "I5"), ("attestation", "I4"), ("publisher-repository", "I4"))]
        return result
    files = {u["filename"]: u for u in release["urls"] if isinstance(u, dict) and isinstance(u.get("filename"), str)}
    result.checks.append(index_hashes_check(files, simple, got_simple.reason, version))
    result.checks.append(file_hashes_check(client, json_url, files, installed, download, endpoints))
    result.checks.append(yanked_check(release, files))
    result.checks.append(wheel_check(files, installed))
    attested = attestation_check(client, _attested_files(files, installed), simple, endpoints)
    result.checks.append(attested.check)
    info = release.get("info")
    result.checks.append(publisher_repository_check(info if isinstance(info, dict) else None, attested))
    verified = (c := result.check("file-hashes")) is not None and c.outcome == "verified"
    digests = installed if installed is not None else {f: _sha256(u) for f, u in files.items()}
    publisher = attested.publisher if attested.check.outcome == "verified" else None
    result.pins = Pins(version=version, sha256={k: v for k, v in digests.items() if v} if verified else {},
                       attestation_digest=attested.digest if publisher else None,
                       publisher=publisher.identity if publisher else None,
                       source_repository=publisher.source_repository if publisher else None,
                       workflow=publisher.workflow if publisher else None)
    return result


def _attested_files(files: dict[str, dict[str, Any]], installed: Mapping[str, str] | None) -> dict[str, str]:
    """The files whose provenance matters, with the sha256 to hold it to: what was installed, else every file of the
    release at the index's published sha256. Which file the install took is not known here, and it need not be the
    one `_preferred_file` downloads (uv takes a platform wheel before a pure one, the sdist where no wheel fits): the
    provenance of one file must not speak for a release whose other files have none. Empty when a file has no
    sha256 to hold provenance to."""
    if installed is not None:
        return {f: d.lower() for f, d in installed.items()}
    digests = {f: _sha256(entry) for f, entry in files.items()}
    return {f: d for f, d in digests.items() if d} if all(digests.values()) else {}


def _release(got: Fetched) -> dict[str, Any] | None:
    data = got.json_object()
    return data if data is not None and isinstance(data.get("urls"), list) else None


def _release_from_project(got: Fetched, version: str) -> dict[str, Any] | None:
    """The release out of a project document (`releases[version]`); per-file yanked flags still apply."""
    data = got.json_object()
    releases = data.get("releases") if data is not None else None
    files = releases.get(version) if isinstance(releases, dict) else None
    if data is None or not isinstance(files, list):
        return None
    info = data.get("info") if isinstance(data.get("info"), dict) and data["info"].get("version") == version else {}
    return {"info": info, "urls": files}


def _simple_files(got: Fetched) -> dict[str, dict[str, Any]] | None:
    data = got.json_object()
    files = data.get("files") if data is not None else None
    if not isinstance(files, list):
        return None
    return {f["filename"]: f for f in files if isinstance(f, dict) and isinstance(f.get("filename"), str)}


def _sha256(entry: Mapping[str, Any]) -> str | None:
    digests = entry.get("digests") or entry.get("hashes")
    value = digests.get("sha256") if isinstance(digests, dict) else None
    return value.lower() if isinstance(value, str) else None


def index_hashes_check(files: dict[str, dict[str, Any]], simple: dict[str, dict[str, Any]] | None,
                       simple_reason: str, version: str | None = None) -> Check:
    """The JSON API's digests and the PEP 691 Simple API's hashes must agree for every file of the release, and the
    Simple API (what the installer reads) must list no file of the release that the JSON API does not."""
    if simple is None:
        return Check(name="index-hashes", outcome="unavailable", rule_id="I2",
                     evidence=f"PEP 691 Simple API not readable ({simple_reason or 'not JSON'})")
    release = pypi_normalise(version) if version is not None else None
    unlisted = sorted(f for f in simple if f not in files and release is not None and _file_version(f) == release)
    if unlisted:
        return Check(name="index-hashes", outcome="failed", rule_id="I2",
                     evidence=f"the Simple API lists {len(unlisted)} file(s) of this release that the JSON API does "
                              f"not, so their hashes and provenance were not checked: {unlisted[0][:200]}")
    if not files:
        return Check(name="index-hashes", outcome="absent", rule_id="I2", evidence="the release has no files")
    for filename, entry in files.items():
        json_hash, simple_entry = _sha256(entry), simple.get(filename)
        simple_hash = _sha256(simple_entry) if simple_entry else None
        if json_hash is None or simple_hash is None:
            return Check(name="index-hashes", outcome="unavailable", rule_id="I2",
                         evidence=f"{filename}: sha256 missing from the "
                                  f"{'JSON API' if json_hash is None else 'Simple API'}")
        if json_hash != simple_hash:
            return Check(name="index-hashes", outcome="failed", rule_id="I2",
                         evidence=f"{filename}: JSON API sha256 {json_hash} but Simple API sha256 {simple_hash}")
    return Check(name="index-hashes", outcome="verified", rule_id="I2",
                 evidence=f"JSON API and Simple API agree on the sha256 of {len(files)} file(s)")


def _file_version(filename: str) -> str | None:
    """The normalised version a wheel or sdist file name carries, None for another kind of file or name."""
    try:
        if filename.endswith(".whl"):
            return str(parse_wheel_filename(filename)[1])
        return str(parse_sdist_filename(filename)[1])
    except (InvalidWheelFilename, InvalidSdistFilename, InvalidVersion):
        return None


def file_hashes_check(client: httpx.Client, json_url: str, files: dict[str, dict[str, Any]],
                      installed: Mapping[str, str] | None, download: bool,
                      endpoints: RegistryEndpoints = DEFAULT_ENDPOINTS) -> Check:
    """What was installed (or a downloaded file) must have the sha256 the registry publishes."""
    if installed is not None:
        return _installed_hashes(files, installed)
    chosen = _preferred_file(files)
    if chosen is None:
        return Check(name="file-hashes", outcome="absent", rule_id="I2", evidence="the release has no files")
    if not download:
        return Check(name="file-hashes", outcome="unavailable", rule_id="I2",
                     evidence="no installed files given and download disabled")
    expected = _sha256(files[chosen])
    url = urljoin(json_url, str(files[chosen].get("url", "")))
    if not endpoints.allows(urlsplit(url).hostname):
        return Check(name="file-hashes", outcome="unavailable", rule_id="I2",
                     evidence=f"{chosen}: file URL is off the registry hosts; not fetched")
    got = fetch(client, url, max_bytes=MAX_ARTIFACT_BYTES)
    if not got.ok or expected is None:
        return Check(name="file-hashes", outcome="unavailable", rule_id="I2",
                     evidence=f"{chosen}: {got.reason or 'no published sha256'}")
    actual = hashlib.sha256(got.content).hexdigest()
    if actual != expected:
        return Check(name="file-hashes", outcome="failed", rule_id="I2",
                     evidence=f"{chosen}: downloaded sha256 {actual}, registry says {expected}")
    return Check(name="file-hashes", outcome="verified", rule_id="I2",
                 evidence=f"{chosen}: {len(got.content)} bytes, sha256 {actual} as published")


def _installed_hashes(files: dict[str, dict[str, Any]], installed: Mapping[str, str]) -> Check:
    if not installed:
        return Check(name="file-hashes", outcome="unavailable", rule_id="I2", evidence="no installed files given")
    for filename, digest in installed.items():
        expected = _sha256(files[filename]) if filename in files else None
        if expected is None:
            return Check(name="file-hashes", outcome="failed", rule_id="I2",
                         evidence=f"{filename} was installed but the registry lists no such file for this release")
        if digest.lower() != expected:
            return Check(name="file-hashes", outcome="failed", rule_id="I2",
                         evidence=f"{filename}: installed sha256 {digest.lower()}, registry says {expected}")
    return Check(name="file-hashes", outcome="verified", rule_id="I2",
                 evidence=f"{len(installed)} installed file(s) have the published sha256")


def _preferred_file(files: dict[str, dict[str, Any]]) -> str | None:
    wheels = sorted(f for f in files if f.endswith(".whl"))
    pure = [f for f in wheels if f.endswith("-none-any.whl")]
    sdists = sorted(f for f in files if not f.endswith(".whl"))
    return (pure or wheels or sdists or [None])[0]


def yanked_check(release: dict[str, Any], files: dict[str, dict[str, Any]]) -> Check:
    info = release.get("info") if isinstance(release.get("info"), dict) else {}
    yanked = bool(info.get("yanked")) or any(u.get("yanked") is True for u in files.values())
    if yanked:
        reason = info.get("yanked_reason") or next((u.get("yanked_reason") for u in files.values()
                                                    if u.get("yanked_reason")), None)
        return Check(name="yanked", outcome="failed", rule_id="I6",
                     evidence=f"the release is yanked (reason: {str(reason or 'none given')[:200]})")
    return Check(name="yanked", outcome="verified", rule_id="I6", evidence="the release is not yanked")


def wheel_check(files: dict[str, dict[str, Any]], installed: Mapping[str, str] | None) -> Check:
    """I5: an sdist-only release (or an install from the sdist) runs build code at install time."""
    if installed:
        sdists = [f for f in installed if not f.endswith(".whl")]
        if sdists:
            return Check(name="wheel", outcome="failed", rule_id="I5",
                         evidence=f"installed from source distribution {sdists[0]}: its build code ran at install")
        return Check(name="wheel", outcome="verified", rule_id="I5", evidence="installed from wheel(s) only")
    if not files:
        return Check(name="wheel", outcome="absent", rule_id="I5", evidence="the release has no files")
    if not any(f.endswith(".whl") for f in files):
        return Check(name="wheel", outcome="failed", rule_id="I5",
                     evidence="the release has no wheel (sdist only): installing it runs its build code")
    return Check(name="wheel", outcome="verified", rule_id="I5", evidence="a wheel is published")


def attestation_check(client: httpx.Client, attested: Mapping[str, str], simple: dict[str, dict[str, Any]] | None,
                      endpoints: RegistryEndpoints = DEFAULT_ENDPOINTS) -> Pep740Result:
    """PEP 740: the Simple API's `provenance` key per file names its provenance object (null = none published);
    each one is fetched from the registry and verified offline (pep740)."""
    if simple is None:
        return _att("unavailable", "Simple API not readable")
    if not attested:
        return _att("unavailable", "no file with a known sha256 to hold provenance to")
    if len(attested) > MAX_ATTESTED_FILES:
        return _att("unavailable", f"the release has {len(attested)} files; provenance is checked for at most "
                                   f"{MAX_ATTESTED_FILES}")
    entries = {f: simple.get(f) for f in attested}
    if not all(isinstance(e, dict) and "provenance" in e for e in entries.values()):
        return _att("unavailable", "the index does not serve PEP 740 provenance data (no `provenance` key)")
    missing = [f for f, e in entries.items() if not (e or {}).get("provenance")]
    if missing:
        return _att("absent", f"no PEP 740 provenance was published for {', '.join(sorted(missing))}")
    results: list[Pep740Result] = []
    for filename, entry in sorted(entries.items()):
        url = str((entry or {}).get("provenance"))
        if not endpoints.allows(urlsplit(url).hostname):
            return _att("unavailable", f"{filename}: the provenance URL is off the registry hosts; not fetched")
        got = fetch(client, url, accept="application/json")
        if not got.ok:
            return _att("unavailable", f"{filename}: provenance not fetched: {got.reason}")
        result = verify_provenance(got.content, filename, attested[filename])
        if result.check.outcome != "verified":
            return result
        results.append(result)
    return _every_file_verified(results)


def _every_file_verified(results: list[Pep740Result]) -> Pep740Result:
    """One result for a release whose every file's provenance verified: the first file's, naming how many files and
    every publisher (the pinned digest is the first file's statement, in file-name order)."""
    first = results[0]
    if len(results) == 1:
        return first
    publishers = list(dict.fromkeys(r.publisher for r in results if r.publisher is not None))
    evidence = f"{len(results)} files, each verified; {first.check.evidence}"
    return Pep740Result(first.check.model_copy(update={"evidence": evidence}),
                        publisher=merged_publishers(publishers) if publishers else None, digest=first.digest)


def _att(outcome: Outcome, evidence: str) -> Pep740Result:
    return Pep740Result(Check(name="attestation", outcome=outcome, rule_id="I4", evidence=evidence))


def python_tree(requirements: str) -> DependencyTree:
    """The hash-pinned tree `uv pip compile --generate-hashes` wrote for the install (and that uv then installed
    with --require-hashes): one dependency per `name==version`, its first sha256 as integrity."""
    dependencies: list[Dependency] = []
    for block in re.split(r"\n(?=\S)", requirements):
        head = block.strip().split()[0] if block.strip() else ""
        if not head or head.startswith("#") or "==" not in head:
            continue
        name, _, version = head.partition("==")
        hashes = re.findall(r"--hash=(sha256:[0-9a-f]{64})", block)
        dependencies.append(Dependency(name=name, version=version, integrity=hashes[0] if hashes else None))
    return DependencyTree(lockfile="requirements.txt (uv pip compile --generate-hashes)", total=len(dependencies),
                          dependencies=dependencies)
