"""PyPI PEP 740 provenance (I4): verify a file's provenance object offline with `pypi-attestations`.

The Simple API names, per file, a provenance URL (PyPI's integrity API). The provenance object groups attestations by
the Trusted Publisher that made them (GitHub, GitLab, Google Cloud, CircleCI). Each attestation is verified against
that publisher as its policy (the Sigstore certificate must have been issued to exactly that identity), against the
production trust root `sigstore` ships (offline: the bundle carries its log entry), and its subject must be this file
with the sha256 the index publishes and the install was held to (`--require-hashes`).
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass

from typing import TYPE_CHECKING

from pydantic import ValidationError

from scanner.provenance.model import Check, Outcome
from scanner.provenance.sigstore_offline import TrustRootUnavailable, offline_verifier

if TYPE_CHECKING:
    from pypi_attestations import Publisher

MAX_FIELD_CHARS = 200


@dataclass(frozen=True)
class TrustedPublisher:
    """Who published a file, as its verified provenance says."""

    identity: str
    source_repository: str | None = None
    workflow: str | None = None
    repositories: tuple[str, ...] = ()  # each publisher's repository URL (GitHub, GitLab), for pypi_repository


@dataclass(frozen=True)
class Pep740Result:
    check: Check
    publisher: TrustedPublisher | None = None
    digest: str | None = None  # sha256 of the verified publish statement, pinned in the lock


def describe_publisher(publisher: Publisher) -> TrustedPublisher:
    """The publisher as one line, plus the repository and workflow when the kind has them."""
    from pypi_attestations import CircleCIPublisher, GitHubPublisher, GitLabPublisher, GooglePublisher

    if isinstance(publisher, GitHubPublisher):
        repository = publisher.repository[:MAX_FIELD_CHARS]
        environment = f", environment {publisher.environment[:MAX_FIELD_CHARS]}" if publisher.environment else ""
        url = f"https://github.com/{repository}"
        return TrustedPublisher(f"GitHub {repository} (workflow {publisher.workflow[:MAX_FIELD_CHARS]}{environment})",
                                url, publisher.workflow[:MAX_FIELD_CHARS], (url,))
    if isinstance(publisher, GitLabPublisher):
        repository = publisher.repository[:MAX_FIELD_CHARS]
        path = publisher.workflow_filepath[:MAX_FIELD_CHARS]
        url = f"https://gitlab.com/{repository}"
        return TrustedPublisher(f"GitLab {repository} (pipeline {path})", url, path, (url,))
    if isinstance(publisher, GooglePublisher):
        return TrustedPublisher(f"Google Cloud service account {publisher.email[:MAX_FIELD_CHARS]}")
    if isinstance(publisher, CircleCIPublisher):
        return TrustedPublisher(f"CircleCI project {publisher.project_id[:MAX_FIELD_CHARS]}")
    return TrustedPublisher(f"{str(getattr(publisher, 'kind', 'unknown'))[:MAX_FIELD_CHARS]} publisher")


def verify_provenance(document: bytes, filename: str, sha256: str) -> Pep740Result:
    """Verify every attestation in a provenance object for the file `filename` whose sha256 is `sha256`.
    pypi-attestations and sigstore are imported here, when there is something to verify: they are slow to load."""
    from pypi_attestations import Distribution, Provenance
    from sigstore.errors import Error as SigstoreError

    try:
        provenance = Provenance.model_validate_json(document)
    except ValidationError as exc:
        return _result("failed", f"{filename}: the provenance object is malformed "
                                 f"({exc.error_count()} validation error(s))")
    if not provenance.attestation_bundles:
        return _result("failed", f"{filename}: the provenance object carries no attestation bundles")
    if not all(b.attestations for b in provenance.attestation_bundles):
        return _result("failed", f"{filename}: a bundle names a publisher but carries no attestation by it")
    try:
        dist = Distribution(name=filename, digest=sha256)
    except ValidationError:
        return _result("unavailable", f"{filename}: not a distribution file name pypi-attestations accepts")
    try:
        offline_verifier()  # load the trust root once up front: a broken cache is "not checked", not "failed"
    except TrustRootUnavailable as exc:
        return _result("unavailable", str(exc))
    verified: list[TrustedPublisher] = []
    digest = None
    for bundle in provenance.attestation_bundles:
        publisher = describe_publisher(bundle.publisher)
        for attestation in bundle.attestations:
            try:
                attestation.verify(bundle.publisher, dist, offline=True)
            except (SigstoreError, ValueError) as exc:  # AttestationError is a ValueError; so is a bad certificate
                return _result("failed", f"{filename}: the attestation by {publisher.identity} does not verify: "
                                         f"{str(exc)[:300]}")
            digest = digest or "sha256:" + hashlib.sha256(attestation.envelope.statement).hexdigest()
        if publisher not in verified:  # named only once every attestation it made has verified
            verified.append(publisher)
    names = "; ".join(p.identity for p in verified)
    return Pep740Result(Check(name="attestation", outcome="verified", rule_id="I4",
                              evidence=f"{filename}: PEP 740 provenance by trusted publisher {names}; Sigstore "
                                       "certificate and Rekor entry verified offline; subject sha256 matches the "
                                       "index"), publisher=merged_publishers(verified), digest=digest)


def merged_publishers(publishers: list[TrustedPublisher]) -> TrustedPublisher:
    """One publisher as is; several (rare: more than one trusted publisher attested the file) joined."""
    if len(publishers) == 1:
        return publishers[0]
    return TrustedPublisher("; ".join(p.identity for p in publishers),
                            "; ".join(p.source_repository for p in publishers if p.source_repository) or None,
                            "; ".join(p.workflow for p in publishers if p.workflow) or None,
                            tuple(dict.fromkeys(r for p in publishers for r in p.repositories)))


def _result(outcome: Outcome, evidence: str) -> Pep740Result:
    return Pep740Result(Check(name="attestation", outcome=outcome, rule_id="I4", evidence=evidence))
