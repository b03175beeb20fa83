"""npm registry checks of one resolved package: tarball integrity (I2), registry signatures (I3), attestations (I4,
verified offline by npm_attestations)."""

from __future__ import annotations

import base64
import binascii
import hashlib
from datetime import datetime, timezone
from typing import TYPE_CHECKING, Any

import httpx
from cryptography.exceptions import InvalidSignature
from cryptography.hazmat.primitives import hashes
from cryptography.hazmat.primitives.asymmetric import ec

from scanner.registry.client import MAX_ARTIFACT_BYTES, fetch
from scanner.registry.endpoints import DEFAULT_ENDPOINTS, RegistryEndpoints
from scanner.provenance.model import Check, Outcome, PackageProvenance, Pins
from scanner.provenance.npm_attestations import NpmAttestationResult, Subject, sha512_hex_of_integrity, \
    verify_npm_attestations
from scanner.provenance.npm_keys import RegistryKey, load_pinned_keys, parse_time
from scanner.provenance.redact import without_secrets

if TYPE_CHECKING:
    from sigstore.verify import Verifier

_SRI_ALGORITHMS = {"sha512": hashlib.sha512, "sha384": hashlib.sha384, "sha256": hashlib.sha256, "sha1": hashlib.sha1}
_SRI_STRENGTH = ["sha512", "sha384", "sha256", "sha1"]
STRIPPED = "the registry response carries no dist.signatures (npm signs every version, so a mirror or proxy " \
           "removed them)"


def packument_url(name: str, endpoints: RegistryEndpoints = DEFAULT_ENDPOINTS) -> str:
    """Registry URL of a package document (@scope/name → @scope%2fname)."""
    return endpoints.npm_packument(name)


def check_npm_package(client: httpx.Client, name: str, version: str, *,
                      endpoints: RegistryEndpoints = DEFAULT_ENDPOINTS, keys: dict[str, RegistryKey] | None = None,
                      tarball: bytes | None = None, now: datetime | None = None,
                      verifier: Verifier | None = None) -> PackageProvenance:
    """Check name@version against the registry. tarball: the bytes that were installed (fetched when None);
    verifier: the offline Sigstore verifier for attestations (made when needed)."""
    result = PackageProvenance(ecosystem="npm", name=name, version=version, pins=Pins(version=version))
    got = fetch(client, packument_url(name, endpoints), accept="application/json")
    packument = got.json_object() or {}
    doc = _version_doc(packument, version)
    if doc is None:
        reason = got.reason if not got.ok else f"version {version} is not in the registry's package document"
        result.checks = [Check(name=n, outcome="unavailable", evidence=reason, rule_id=r)
                         for n, r in (("integrity", "I2"), ("registry-signature", "I3"), ("attestation", "I4"))]
        return result
    dist = doc.get("dist") if isinstance(doc.get("dist"), dict) else {}
    if tarball is None:
        tarball, reason = _download_tarball(client, dist, endpoints)
    else:
        reason = "installed bytes given by the caller"
    result.checks.append(integrity_check(dist, tarball, reason))
    published = parse_time(_str(packument.get("time", {}).get(version))) if isinstance(
        packument.get("time"), dict) else None
    keys = keys if keys is not None else load_pinned_keys()
    result.checks.append(signature_check(name, version, dist, keys, published, now or datetime.now(timezone.utc)))
    attested = attestation_check(client, dist, name, version, keys=keys, repository=_repository(doc),
                                 tarball=tarball, published=published, endpoints=endpoints,
                                 verifier=verifier)
    result.checks.append(attested.check)
    result.pins = _pins(version, doc, dist, result, attested)
    return result


def _str(value: Any) -> str | None:
    return value if isinstance(value, str) else None


def _version_doc(packument: dict[str, Any], version: str) -> dict[str, Any] | None:
    versions = packument.get("versions")
    doc = versions.get(version) if isinstance(versions, dict) else None
    return doc if isinstance(doc, dict) else None


def _download_tarball(client: httpx.Client, dist: dict[str, Any],
                      endpoints: RegistryEndpoints) -> tuple[bytes | None, str]:
    url = _str(dist.get("tarball"))
    if not url:
        return None, "the version has no dist.tarball"
    if not endpoints.same_host(url, endpoints.npm_registry):
        return None, f"dist.tarball points off the registry ({without_secrets(url)}); not fetched"
    got = fetch(client, url, max_bytes=MAX_ARTIFACT_BYTES)
    return (got.content, f"fetched {len(got.content)} bytes") if got.ok else (None, got.reason)


def parse_sri(integrity: str) -> dict[str, str]:
    """Subresource-integrity string → {algorithm: base64 digest} (the strongest kept per algorithm)."""
    out: dict[str, str] = {}
    for item in integrity.split():
        algorithm, _, digest = item.partition("-")
        if algorithm in _SRI_ALGORITHMS and digest:
            out.setdefault(algorithm, digest.split("?")[0])
    return out


def integrity_check(dist: dict[str, Any], tarball: bytes | None, how: str) -> Check:
    """The tarball's digest against dist.integrity (strongest algorithm) and dist.shasum."""
    sri = parse_sri(_str(dist.get("integrity")) or "")
    shasum = (_str(dist.get("shasum")) or "").lower()
    if not sri and not shasum:
        return Check(name="integrity", outcome="absent", evidence="the registry publishes no integrity or shasum",
                     rule_id="I2")
    if tarball is None:
        return Check(name="integrity", outcome="unavailable", evidence=f"tarball not checked: {how}", rule_id="I2")
    compared: list[str] = []
    if sri:
        algorithm = next(a for a in _SRI_STRENGTH if a in sri)
        actual = base64.b64encode(_SRI_ALGORITHMS[algorithm](tarball).digest()).decode()
        if actual != sri[algorithm]:
            return Check(name="integrity", outcome="failed", rule_id="I2",
                         evidence=f"tarball {algorithm} is {algorithm}-{actual}, registry says "
                                  f"{algorithm}-{sri[algorithm]}")
        compared.append(f"{algorithm}-{actual}")
    if shasum:
        actual_sha1 = hashlib.sha1(tarball).hexdigest()
        if actual_sha1 != shasum:
            return Check(name="integrity", outcome="failed", rule_id="I2",
                         evidence=f"tarball sha1 is {actual_sha1}, registry shasum says {shasum}")
        compared.append(f"sha1 {actual_sha1}")
    return Check(name="integrity", outcome="verified", rule_id="I2",
                 evidence=f"{len(tarball)} bytes match " + " and ".join(compared))


def signature_check(name: str, version: str, dist: dict[str, Any], keys: dict[str, RegistryKey],
                    published: datetime | None, now: datetime) -> Check:
    """ECDSA P-256/SHA-256 registry signature over `name@version:integrity`, key matched by keyid and window."""
    signatures = dist.get("signatures")
    integrity = _str(dist.get("integrity"))
    if not isinstance(signatures, list) or not signatures:
        return Check(name="registry-signature", outcome="unavailable", evidence=STRIPPED, rule_id="I3")
    if not integrity:
        return Check(name="registry-signature", outcome="unavailable", rule_id="I3",
                     evidence="signatures present but no dist.integrity to check them over")
    message = f"{name}@{version}:{integrity}".encode()
    when = published or now
    verified: list[str] = []
    for sig in signatures:
        problem = _signature_problem(sig, keys, message, when)
        if problem:
            return Check(name="registry-signature", outcome="failed", evidence=problem, rule_id="I3")
        verified.append(sig["keyid"])
    window = "publish time" if published else "now (publish time unknown)"
    return Check(name="registry-signature", outcome="verified", rule_id="I3",
                 evidence=f"{len(verified)} signature(s) verify with {', '.join(verified)} "
                          f"({keys[verified[0]].source} key, valid at {window})")


def _signature_problem(sig: Any, keys: dict[str, RegistryKey], message: bytes, when: datetime) -> str | None:
    if not isinstance(sig, dict) or not isinstance(sig.get("keyid"), str) or not isinstance(sig.get("sig"), str):
        return "a dist.signatures entry is malformed"
    key = keys.get(sig["keyid"])
    if key is None:
        return f"signed with keyid {sig['keyid'][:80]}, which is not a known registry key"
    if key.expires is not None and when > key.expires:
        return f"key {key.keyid} expired {key.expires.isoformat()} before the signature time {when.isoformat()}"
    try:
        key.public_key.verify(base64.b64decode(sig["sig"], validate=True), message, ec.ECDSA(hashes.SHA256()))
    except (InvalidSignature, binascii.Error, ValueError):
        return f"the signature by {key.keyid} does not verify over {message.decode()[:300]}"
    return None


def attestation_check(client: httpx.Client, dist: dict[str, Any], name: str, version: str, *,
                      keys: dict[str, RegistryKey], repository: str | None, tarball: bytes | None = None,
                      published: datetime | None = None, endpoints: RegistryEndpoints = DEFAULT_ENDPOINTS,
                      verifier: Verifier | None = None) -> NpmAttestationResult:
    """I4: fetch the attestations named by dist.attestations and verify them offline (npm_attestations), about the
    tarball's own sha512 when its bytes are at hand, else dist.integrity's.

    When the registry signatures were stripped, a missing dist.attestations may have been stripped too: that is
    "unavailable", not "absent".
    """
    attestations = dist.get("attestations")
    if attestations is None and not dist.get("signatures"):
        return _att("unavailable", "no dist.attestations, but the signatures were removed too, so absent and "
                                   "removed cannot be told apart")
    if attestations is None:
        return _att("absent", "the version document has no dist.attestations")
    url = _str(attestations.get("url")) if isinstance(attestations, dict) else None
    if not url:
        return _att("unavailable", "dist.attestations carries no URL to fetch them from")
    if not endpoints.same_host(url, endpoints.npm_registry):
        return _att("unavailable", f"dist.attestations points off the registry ({without_secrets(url)}); not fetched")
    sha512 = hashlib.sha512(tarball).hexdigest() if tarball is not None else \
        sha512_hex_of_integrity(_str(dist.get("integrity")) or "")
    if sha512 is None:
        return _att("unavailable", "neither the tarball nor a sha512 dist.integrity to hold the attestation "
                                   "subject to")
    got = fetch(client, url, accept="application/json")
    if not got.ok:
        return _att("unavailable", f"attestations not fetched: {got.reason}")
    declared = isinstance(attestations.get("provenance"), dict)
    return verify_npm_attestations(got.content, Subject(name, version, sha512), keys=keys, repository=repository,
                                   published=published, provenance_declared=declared, verifier=verifier)


def _att(outcome: Outcome, evidence: str) -> NpmAttestationResult:
    return NpmAttestationResult(Check(name="attestation", outcome=outcome, rule_id="I4", evidence=evidence))


def _repository(doc: dict[str, Any]) -> str | None:
    repo = doc.get("repository")
    return _str(repo.get("url")) if isinstance(repo, dict) else _str(repo)


def _pins(version: str, doc: dict[str, Any], dist: dict[str, Any], result: PackageProvenance,
          attested: NpmAttestationResult) -> Pins:
    integrity_ok = (c := result.check("integrity")) is not None and c.outcome == "verified"
    signature_ok = (s := result.check("registry-signature")) is not None and s.outcome == "verified"
    signatures = dist.get("signatures") if isinstance(dist.get("signatures"), list) else []
    user = doc.get("_npmUser") if isinstance(doc.get("_npmUser"), dict) else {}
    publisher = _str(user.get("name"))
    trusted = user.get("trustedPublisher")
    if isinstance(trusted, dict) and _str(trusted.get("id")):
        publisher = f"{publisher} (trusted publisher: {trusted['id']})"
    # Only what a verified build certificate names: a claim would differ in spelling from a verified value and
    # make locks taken with and without attestations disagree.
    build = attested.build if attested.check.outcome == "verified" else None
    repo_url = build.source_repository if build else None
    return Pins(version=version,
                integrity=_str(dist.get("integrity")) if integrity_ok else None,
                shasum=_str(dist.get("shasum")) if integrity_ok else None,
                signature_keyid=_str(signatures[0].get("keyid")) if signature_ok and signatures else None,
                attestation_digest=attested.digest if build else None,
                publisher=publisher,
                source_repository=without_secrets(repo_url) if repo_url else None,
                workflow=build.workflow if build else None)


def installed_integrity(package: PackageProvenance, manifest: dict[str, Any], name: str) -> Check:
    """What npm installed (its lockfile's integrity) against what the registry publishes for that version."""
    entry = (manifest.get("packages") or {}).get(f"node_modules/{name}") or {}
    installed = entry.get("integrity")
    published = package.pins.integrity
    if not isinstance(installed, str) or not installed:
        return Check(name="installed-integrity", outcome="unavailable",
                     evidence="the install's lockfile records no integrity for the package", rule_id="I2")
    if not published:
        return Check(name="installed-integrity", outcome="unavailable",
                     evidence="the registry's integrity could not be verified, so nothing to compare with",
                     rule_id="I2")
    if installed != published:
        return Check(name="installed-integrity", outcome="failed", rule_id="I2",
                     evidence=f"installed {installed[:30]}… but the registry publishes {published[:30]}…")
    return Check(name="installed-integrity", outcome="verified", rule_id="I2",
                 evidence="the installed tarball's integrity equals the registry's dist.integrity")
