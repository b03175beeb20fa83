"""npm provenance attestations (I4): verify the document at `dist.attestations.url` offline.

It holds two Sigstore bundles, each a DSSE envelope around an in-toto statement whose subject is
`pkg:npm/<name>@<version>` with the tarball's sha512:

- the publish attestation (predicate npm publish v0.1), signed by the registry's own key (the pinned keys also
  used for registry signatures, I3) — the registry vouches that it accepted this tarball for this name and version;
- the SLSA build provenance, signed by a short-lived Fulcio certificate issued to a CI workflow and logged in Rekor;
  `sigstore` verifies certificate chain, log entry and signature against its bundled trust root, and the policy
  holds the certificate to the repository the package declares.

Both subjects must name this package and carry the installed tarball's sha512. Any failure is `failed` (I4, error);
a document that cannot be fetched is `unavailable`, never a pass.
"""

from __future__ import annotations

import base64
import binascii
import hashlib
import json
from dataclasses import dataclass
from datetime import datetime, timezone
from typing import TYPE_CHECKING, Any
from urllib.parse import unquote

from cryptography.exceptions import InvalidSignature
from cryptography.hazmat.primitives import hashes
from cryptography.hazmat.primitives.asymmetric import ec

from scanner.provenance.model import Check
from scanner.provenance.npm_keys import RegistryKey
from scanner.provenance.sigstore_identity import BuildIdentity, SourceRepositoryPolicy, build_identity
from scanner.provenance.sigstore_offline import TrustRootUnavailable, offline_verifier
from scanner.signing.dsse import pae

if TYPE_CHECKING:
    from sigstore.verify import Verifier

PUBLISH_PREDICATE = "https://github.com/npm/attestation/tree/main/specs/publish/v0.1"
SLSA_PREDICATE_PREFIX = "https://slsa.dev/provenance/"
IN_TOTO_PAYLOAD = "application/vnd.in-toto+json"
MAX_ATTESTATIONS = 16


class AttestationInvalid(Exception):
    """An attestation is present but wrong; the message is the evidence."""


@dataclass(frozen=True)
class Subject:
    """What an attestation must be about: this package version and the sha512 (hex) of its tarball."""

    name: str
    version: str
    sha512_hex: str

    @property
    def purl(self) -> str:
        return f"pkg:npm/{self.name}@{self.version}"


@dataclass(frozen=True)
class NpmAttestationResult:
    check: Check
    build: BuildIdentity | None = None
    digest: str | None = None  # sha256 of the verified provenance statement, pinned in the lock


def sha512_hex_of_integrity(integrity: str) -> str | None:
    """The hex sha512 out of an SRI string (`sha512-<base64>`), or None when it has none."""
    for item in integrity.split():
        algorithm, _, digest = item.partition("-")
        if algorithm == "sha512":
            try:
                return base64.b64decode(digest.split("?")[0], validate=True).hex()
            except (binascii.Error, ValueError):
                return None
    return None


def verify_npm_attestations(document: bytes, subject: Subject, *, keys: dict[str, RegistryKey],
                            repository: str | None, published: datetime | None = None,
                            provenance_declared: bool = False,
                            verifier: Verifier | None = None) -> NpmAttestationResult:
    """Verify every attestation in the registry's attestations document for `subject`.

    published: the version's publish time from the packument (the registry key must have been valid then; unknown
    means now, as for registry signatures). provenance_declared: the packument's dist.attestations promises SLSA
    provenance, so a document without it is a downgrade, not "none published".
    """
    try:
        attestations = _attestations(document)
        publish = [b for p, b in attestations if p == PUBLISH_PREDICATE]
        provenance = [b for p, b in attestations if p.startswith(SLSA_PREDICATE_PREFIX)]
        if not publish and not provenance:
            raise AttestationInvalid("the attestations document has neither a publish attestation nor provenance")
        if provenance_declared and not provenance:
            raise AttestationInvalid("the version document declares SLSA provenance, but the attestations document "
                                     "carries none")
        when = published or datetime.now(timezone.utc)
        for bundle in publish:
            _verify_publish(bundle, subject, keys, when)
        build, digest = None, None
        for bundle in provenance:
            build, digest = _verify_provenance(bundle, subject, repository, verifier)
    except AttestationInvalid as exc:
        return NpmAttestationResult(Check(name="attestation", outcome="failed", rule_id="I4", evidence=str(exc)))
    except TrustRootUnavailable as exc:
        return NpmAttestationResult(Check(name="attestation", outcome="unavailable", rule_id="I4", evidence=str(exc)))
    return NpmAttestationResult(Check(name="attestation", outcome="verified", rule_id="I4",
                                      evidence=_evidence(len(publish), build, subject)), build=build, digest=digest)


def _evidence(publish_count: int, build: BuildIdentity | None, subject: Subject) -> str:
    """Most telling first (the terminal shows the start): who built it, from where, then what was verified."""
    parts = []
    if build is not None:
        commit = (build.commit or "?")[:12]
        parts.append(f"built by {build.provider} from {build.source_repository} at {commit} (workflow "
                     f"{build.workflow}); SLSA provenance certificate and Rekor entry verified offline")
    else:
        parts.append("no SLSA build provenance published")
    if publish_count:
        parts.append("publish attestation signed by the registry key")
    return "; ".join(parts) + f"; subjects are {subject.purl} with the tarball's sha512"


def _attestations(document: bytes) -> list[tuple[str, dict[str, Any]]]:
    try:
        data = json.loads(document)
    except (ValueError, RecursionError):  # RecursionError: nested past json's depth
        raise AttestationInvalid("the attestations document is not JSON") from None
    items = data.get("attestations") if isinstance(data, dict) else None
    if not isinstance(items, list) or not items:
        raise AttestationInvalid("the attestations document lists no attestations")
    if len(items) > MAX_ATTESTATIONS:
        raise AttestationInvalid(f"the attestations document lists {len(items)} attestations (at most "
                                 f"{MAX_ATTESTATIONS} expected)")
    out = []
    for item in items:
        if not isinstance(item, dict) or not isinstance(item.get("predicateType"), str) \
                or not isinstance(item.get("bundle"), dict):
            raise AttestationInvalid("an attestation entry has no predicateType or bundle")
        out.append((item["predicateType"], item["bundle"]))
    return out


def _envelope(bundle: dict[str, Any]) -> tuple[str, bytes, list[dict[str, Any]]]:
    envelope = bundle.get("dsseEnvelope")
    if not isinstance(envelope, dict) or not isinstance(envelope.get("payload"), str) \
            or not isinstance(envelope.get("signatures"), list) or not envelope["signatures"]:
        raise AttestationInvalid("a bundle carries no DSSE envelope with a signature")
    try:
        payload = base64.b64decode(envelope["payload"], validate=True)
    except (binascii.Error, ValueError):
        raise AttestationInvalid("a DSSE payload is not base64") from None
    return str(envelope.get("payloadType", "")), payload, envelope["signatures"]


def _statement(payload_type: str, payload: bytes, subject: Subject, predicate_type: str) -> dict[str, Any]:
    if payload_type != IN_TOTO_PAYLOAD:
        raise AttestationInvalid(f"payload type {payload_type[:80]!r} is not an in-toto statement")
    try:
        statement = json.loads(payload)
    except (ValueError, RecursionError):  # a signed statement can still be nested past json's depth
        raise AttestationInvalid("an attestation statement is not JSON") from None
    if not isinstance(statement, dict) or not str(statement.get("predicateType", "")).startswith(predicate_type):
        raise AttestationInvalid(f"the statement's predicate is not {predicate_type}")
    _check_subject(statement.get("subject"), subject)
    return statement


def _check_subject(subjects: Any, subject: Subject) -> None:
    if not isinstance(subjects, list) or not subjects:
        raise AttestationInvalid("the statement names no subject")
    for item in subjects:
        name = unquote(str(item.get("name", ""))) if isinstance(item, dict) else ""
        digest = item.get("digest") if isinstance(item, dict) else None
        sha512 = str(digest.get("sha512", "")).lower() if isinstance(digest, dict) else ""
        if name == subject.purl and sha512 == subject.sha512_hex:
            return
        if name == subject.purl:
            raise AttestationInvalid(f"the statement's sha512 for {subject.purl} is {sha512[:32]}…, but the "
                                     f"tarball's is {subject.sha512_hex[:32]}…")
    named = ", ".join(unquote(str(i.get("name", "")))[:120] for i in subjects if isinstance(i, dict))
    raise AttestationInvalid(f"the statement is about {named}, not {subject.purl}")


def _verify_publish(bundle: dict[str, Any], subject: Subject, keys: dict[str, RegistryKey], when: datetime) -> None:
    """The registry-signed publish attestation: a pinned key by keyid, valid when the version was published (the
    log entry's own time is not authenticated here: its inclusion proof is not checked); the log entry binds it."""
    payload_type, payload, signatures = _envelope(bundle)
    entry = _log_entry(bundle)
    for signature in signatures:
        keyid = str(signature.get("keyid", "")) if isinstance(signature, dict) else ""
        key = keys.get(keyid)
        if key is None:
            raise AttestationInvalid(f"the publish attestation is signed with keyid {keyid[:80]!r}, which is not a "
                                     "known npm registry key")
        if key.expires is not None and when > key.expires:
            raise AttestationInvalid(f"registry key {keyid} expired {key.expires.isoformat()} before the version "
                                     f"was published ({when.isoformat()})")
        try:
            raw = base64.b64decode(str(signature.get("sig", "")), validate=True)
            key.public_key.verify(raw, pae(payload_type, payload), ec.ECDSA(hashes.SHA256()))
        except (InvalidSignature, binascii.Error, ValueError):
            raise AttestationInvalid(f"the publish attestation's signature by {keyid} does not verify") from None
        _check_log_body(entry, payload, str(signature.get("sig", "")))
    statement = _statement(payload_type, payload, subject, PUBLISH_PREDICATE)
    predicate = statement.get("predicate") if isinstance(statement.get("predicate"), dict) else {}
    if predicate.get("name") != subject.name or predicate.get("version") != subject.version:
        raise AttestationInvalid(f"the publish attestation is for {str(predicate.get('name'))[:120]}@"
                                 f"{str(predicate.get('version'))[:40]}, not {subject.name}@{subject.version}")


def _log_entry(bundle: dict[str, Any]) -> dict[str, Any]:
    material = bundle.get("verificationMaterial")
    entries = material.get("tlogEntries") if isinstance(material, dict) else None
    if not isinstance(entries, list) or not entries or not isinstance(entries[0], dict):
        raise AttestationInvalid("the publish attestation has no transparency log entry")
    return entries[0]


def _check_log_body(entry: dict[str, Any], payload: bytes, signature: str) -> None:
    """The Rekor entry body must record this payload's hash and this signature (it is the same envelope)."""
    try:
        body = json.loads(base64.b64decode(str(entry.get("canonicalizedBody", "")), validate=True))
        spec = body["spec"]
        logged_hash = spec["payloadHash"]["value"]
        logged_signatures = [s.get("signature") for s in spec["signatures"]]
    except (binascii.Error, ValueError, KeyError, TypeError, AttributeError, RecursionError):
        raise AttestationInvalid("the publish attestation's log entry is unreadable") from None
    if logged_hash != hashlib.sha256(payload).hexdigest() or signature not in logged_signatures:
        raise AttestationInvalid("the publish attestation's log entry records another envelope")


def _verify_provenance(bundle: dict[str, Any], subject: Subject, repository: str | None,
                       verifier: Verifier | None) -> tuple[BuildIdentity, str]:
    """The SLSA provenance: sigstore verifies it offline against a policy built from the declared repository."""
    if not repository:
        raise AttestationInvalid("the package declares no repository, so its build provenance cannot be tied to "
                                 "one (npm requires repository.url to match when publishing with provenance)")
    from sigstore.errors import Error as SigstoreError  # imported when a bundle is verified: sigstore is slow to load
    from sigstore.models import Bundle

    try:
        parsed = Bundle.from_json(json.dumps(bundle))
        payload_type, payload = (verifier or offline_verifier()).verify_dsse(parsed,
                                                                             SourceRepositoryPolicy(repository))
    except (SigstoreError, ValueError) as exc:  # sigstore raises ValueError for unparseable certificates
        raise AttestationInvalid(f"the SLSA provenance does not verify: {str(exc)[:300]}") from None
    _statement(payload_type, payload, subject, SLSA_PREDICATE_PREFIX)
    return build_identity(parsed.signing_certificate), "sha256:" + hashlib.sha256(payload).hexdigest()
