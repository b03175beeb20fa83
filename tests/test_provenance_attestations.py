"""I4: npm provenance attestations and PyPI PEP 740 provenance, verified offline against vendored REAL signed data
(tests/fixtures/provenance/*/SOURCES.md). Tampered copies are made here, never stored. Only the HTTP layer is mocked,
to give the registry's shape (the registries reachable from this machine serve no attestations)."""

from __future__ import annotations

import base64
import copy
import hashlib
import json
from collections.abc import Callable
from dataclasses import replace
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

import httpx
import pytest

from scanner.provenance.model import Check
from scanner.provenance.npm import check_npm_package
from scanner.provenance.npm_attestations import Subject, sha512_hex_of_integrity, verify_npm_attestations
from scanner.provenance.npm_keys import load_pinned_keys
from scanner.provenance.pep740 import verify_provenance
from scanner.provenance.pypi import check_pypi_package
from scanner.rules.provenance import check_findings
from scanner.provenance.sigstore_identity import normalise_repository

FIXTURES = Path(__file__).parent / "fixtures" / "provenance"
PW_DOC = json.loads((FIXTURES / "npm" / "playwright-cli-0.1.1.packument.json").read_text())
PW_TGZ = (FIXTURES / "npm" / "playwright-cli-0.1.1.tgz").read_bytes()
PW_ATTESTATIONS = json.loads((FIXTURES / "npm" / "playwright-cli-0.1.1.attestations.json").read_text())
PW_SHA512 = hashlib.sha512(PW_TGZ).hexdigest()
PW = Subject("@playwright/cli", "0.1.1", PW_SHA512)
PW_REPO = "git+https://github.com/microsoft/playwright-cli.git"
GCB_FILE = "gcb_attestation_test-0.0.0.tar.gz"
GCB_SHA256 = "461317362419124b6012e855423a9078d6de8aed3e74fa78cc74d669b23dc6cf"
GCB_PROVENANCE = (FIXTURES / "pypi" / f"{GCB_FILE}.provenance").read_bytes()
KEYS = load_pinned_keys()


def serve(routes: dict[str, tuple[int, Any]]) -> httpx.Client:
    def handler(request: httpx.Request) -> httpx.Response:
        status, body = routes.get(request.url.raw_path.decode(), (404, {"error": "Not found"}))
        return httpx.Response(status, content=body if isinstance(body, bytes) else json.dumps(body).encode())

    return httpx.Client(transport=httpx.MockTransport(handler))


def npm_routes(attestations: Any = PW_ATTESTATIONS, doc: dict[str, Any] = PW_DOC) -> dict[str, tuple[int, Any]]:
    routes: dict[str, tuple[int, Any]] = {"/@playwright%2Fcli": (200, doc),
                                          "/@playwright/cli/-/cli-0.1.1.tgz": (200, PW_TGZ)}
    if attestations is not None:
        routes["/-/npm/v1/attestations/@playwright%2fcli@0.1.1"] = (200, attestations)
    return routes


def tampered(mutate: Callable[[dict[str, Any]], None], base: dict[str, Any] = PW_ATTESTATIONS) -> bytes:
    doc = copy.deepcopy(base)
    mutate(doc)
    return json.dumps(doc).encode()


def verify(document: bytes, subject: Subject = PW, repository: str | None = PW_REPO, keys: Any = None) -> Check:
    return verify_npm_attestations(document, subject, keys=KEYS if keys is None else keys,
                                   repository=repository).check


def edit_statement(index: int, edit: Callable[[dict[str, Any]], None]) -> Callable[[dict[str, Any]], None]:
    def mutate(doc: dict[str, Any]) -> None:
        envelope = doc["attestations"][index]["bundle"]["dsseEnvelope"]
        statement = json.loads(base64.b64decode(envelope["payload"]))
        edit(statement)
        envelope["payload"] = base64.b64encode(json.dumps(statement).encode()).decode()
    return mutate


# ------------------------------------------------------------------------------------------------------------ npm

def test_real_npm_attestations_verify_and_record_the_build() -> None:
    pkg = check_npm_package(serve(npm_routes()), "@playwright/cli", "0.1.1")
    check = pkg.check("attestation")
    assert check is not None and check.outcome == "verified", check
    assert pkg.check("integrity").outcome == "verified"  # type: ignore[union-attr]
    assert "https://github.com/microsoft/playwright-cli" in check.evidence
    assert "publish attestation signed by the registry key" in check.evidence
    assert pkg.pins.source_repository == "https://github.com/microsoft/playwright-cli"
    assert pkg.pins.workflow == ("https://github.com/microsoft/playwright-cli/.github/workflows/publish.yml"
                                 "@refs/tags/v0.1.1")
    assert pkg.pins.attestation_digest is not None and pkg.pins.attestation_digest.startswith("sha256:")
    assert not [f for f in check_findings(pkg) if f.rule_id == "I4"]


def test_subject_is_the_tarball_sha512() -> None:
    assert sha512_hex_of_integrity(PW_DOC["versions"]["0.1.1"]["dist"]["integrity"]) == PW_SHA512


@pytest.mark.parametrize("mutate, reason", [
    # SLSA statement's digest edited: its signature no longer verifies
    (edit_statement(1, lambda s: s["subject"][0]["digest"].update(sha512="0" * 128)),
     "SLSA provenance does not verify"),
    # publish statement edited: the registry key's signature no longer verifies
    (edit_statement(0, lambda s: s["predicate"].update(version="0.1.2")), "signature by SHA256:DhQ8"),
    (lambda d: d["attestations"][0]["bundle"]["dsseEnvelope"]["signatures"][0].update(
        sig=d["attestations"][1]["bundle"]["dsseEnvelope"]["signatures"][0]["sig"]), "does not verify"),
    (lambda d: d["attestations"][0]["bundle"]["dsseEnvelope"]["signatures"][0].update(keyid="SHA256:not-a-key"),
     "not a known npm registry key"),
    (lambda d: d["attestations"][1]["bundle"]["verificationMaterial"]["certificate"].update(
        rawBytes=d["attestations"][1]["bundle"]["verificationMaterial"]["certificate"]["rawBytes"][:-40] + "A" * 40),
     "SLSA provenance does not verify"),
    # the log entry's time edited: the inclusion promise (SET) no longer verifies
    (lambda d: d["attestations"][1]["bundle"]["verificationMaterial"]["tlogEntries"][0].update(
        integratedTime="1600000000"), "SLSA provenance does not verify"),
    (lambda d: d["attestations"][1]["bundle"]["verificationMaterial"]["tlogEntries"][0]["inclusionProof"].update(
        hashes=list(reversed(d["attestations"][1]["bundle"]["verificationMaterial"]["tlogEntries"][0][
            "inclusionProof"]["hashes"]))), "SLSA provenance does not verify"),
    (lambda d: d["attestations"][0]["bundle"]["verificationMaterial"]["tlogEntries"][0].update(
        canonicalizedBody=d["attestations"][1]["bundle"]["verificationMaterial"]["tlogEntries"][0][
            "canonicalizedBody"]), "log entry records another envelope"),
    (lambda d: d.update(attestations=[]), "lists no attestations"),
])
def test_tampered_npm_attestations_fail(mutate: Callable[[dict[str, Any]], None], reason: str) -> None:
    check = verify(tampered(mutate))
    assert check.outcome == "failed"
    assert check.rule_id == "I4"
    assert reason in check.evidence


def test_attestations_of_another_version_fail() -> None:
    check = verify(json.dumps(PW_ATTESTATIONS).encode(), subject=replace(PW, version="0.1.2"))
    assert check.outcome == "failed"
    assert "not pkg:npm/@playwright/cli@0.1.2" in check.evidence


def test_attestations_for_another_tarball_fail() -> None:
    check = verify(json.dumps(PW_ATTESTATIONS).encode(), subject=replace(PW, sha512_hex="ab" * 64))
    assert check.outcome == "failed"
    assert "sha512" in check.evidence


def test_provenance_from_another_repository_than_declared_fails() -> None:
    check = verify(json.dumps(PW_ATTESTATIONS).encode(), repository="https://github.com/someone-else/playwright-cli")
    assert check.outcome == "failed"
    assert "built from https://github.com/microsoft/playwright-cli" in check.evidence


def test_provenance_without_declared_repository_fails() -> None:
    check = verify(json.dumps(PW_ATTESTATIONS).encode(), repository=None)
    assert check.outcome == "failed"
    assert "declares no repository" in check.evidence


def test_registry_key_expired_before_publication_fails_and_unknown_time_means_now() -> None:
    keyid = "SHA256:DhQ8wR5APBvFHLF/+Tc+AYvPOdTpcIDqOhxsBHRwC7U"
    expiring = {keyid: replace(KEYS[keyid], expires=datetime(2026, 3, 1, tzinfo=timezone.utc))}
    document = json.dumps(PW_ATTESTATIONS).encode()
    before = verify_npm_attestations(document, PW, keys=expiring, repository=PW_REPO,
                                     published=datetime(2026, 2, 14, tzinfo=timezone.utc)).check
    after = verify_npm_attestations(document, PW, keys=expiring, repository=PW_REPO,
                                    published=datetime(2026, 3, 2, tzinfo=timezone.utc)).check
    unknown = verify_npm_attestations(document, PW, keys=expiring, repository=PW_REPO).check  # now: after expiry
    assert before.outcome == "verified"
    assert after.outcome == "failed" and "expired" in after.evidence
    assert unknown.outcome == "failed" and "expired" in unknown.evidence


def publish_only(doc: dict[str, Any]) -> None:
    doc["attestations"] = doc["attestations"][:1]


def test_provenance_stripped_from_the_document_is_a_downgrade_when_declared() -> None:
    document = tampered(publish_only)
    declared = verify_npm_attestations(document, PW, keys=KEYS, repository=PW_REPO, provenance_declared=True).check
    undeclared = verify_npm_attestations(document, PW, keys=KEYS, repository=PW_REPO).check
    assert declared.outcome == "failed" and "declares SLSA provenance" in declared.evidence
    assert undeclared.outcome == "verified" and "no SLSA build provenance" in undeclared.evidence
    pkg = check_npm_package(serve(npm_routes(attestations=json.loads(document))), "@playwright/cli", "0.1.1")
    assert pkg.check("attestation").outcome == "failed"  # type: ignore[union-attr]  # the packument declares it


def test_subject_is_held_to_the_tarball_bytes_not_only_the_claimed_integrity() -> None:
    routes = npm_routes()
    routes["/@playwright/cli/-/cli-0.1.1.tgz"] = (200, PW_TGZ + b"appended")
    pkg = check_npm_package(serve(routes), "@playwright/cli", "0.1.1")
    assert pkg.check("integrity").outcome == "failed"  # type: ignore[union-attr]
    attestation = pkg.check("attestation")
    assert attestation is not None and attestation.outcome == "failed" and "sha512" in attestation.evidence


def test_not_json_is_failed_and_unreachable_is_unavailable() -> None:
    assert verify(b"<html>").outcome == "failed"
    pkg = check_npm_package(serve(npm_routes(attestations=None)), "@playwright/cli", "0.1.1")
    assert pkg.check("attestation").outcome == "unavailable"  # type: ignore[union-attr]
    assert "HTTP 404" in pkg.check("attestation").evidence  # type: ignore[union-attr]
    assert pkg.pins.attestation_digest is None and pkg.pins.workflow is None


def test_failed_attestation_is_an_I4_error_finding() -> None:
    doc = copy.deepcopy(PW_DOC)
    doc["versions"]["0.1.1"]["repository"] = "github:attacker/playwright-cli"
    pkg = check_npm_package(serve(npm_routes(doc=doc)), "@playwright/cli", "0.1.1")
    assert pkg.check("attestation").outcome == "failed"  # type: ignore[union-attr]
    findings = [f for f in check_findings(pkg) if f.rule_id == "I4"]
    assert findings and findings[0].severity == "error"
    assert pkg.pins.source_repository is None  # pins hold only what a verified build names, never the claim


@pytest.mark.parametrize("declared, expected", [
    ("git+https://github.com/Microsoft/playwright-cli.git", "https://github.com/microsoft/playwright-cli"),
    ("https://github.com/microsoft/playwright-cli/", "https://github.com/microsoft/playwright-cli"),
    ("git://github.com/microsoft/playwright-cli.git", "https://github.com/microsoft/playwright-cli"),
    ("git+ssh://git@github.com/microsoft/playwright-cli.git", "https://github.com/microsoft/playwright-cli"),
    ("git@github.com:microsoft/playwright-cli.git", "https://github.com/microsoft/playwright-cli"),
    ("microsoft/playwright-cli", "https://github.com/microsoft/playwright-cli"),
    ("github:microsoft/playwright-cli", "https://github.com/microsoft/playwright-cli"),
    ("gitlab:group/project", "https://gitlab.com/group/project"),
    ("", None),
    ("not a url", None),
    ("file:///tmp/repo", None),
])
def test_repository_normalisation(declared: str, expected: str | None) -> None:
    assert normalise_repository(declared) == expected


# ----------------------------------------------------------------------------------------------------------- PyPI

def test_real_pep740_provenance_verifies_and_records_the_publisher() -> None:
    result = verify_provenance(GCB_PROVENANCE, GCB_FILE, GCB_SHA256)
    assert result.check.outcome == "verified", result.check
    assert result.publisher is not None
    assert result.publisher.identity == ("Google Cloud service account "
                                         "919436158236-compute@developer.gserviceaccount.com")
    assert result.digest is not None and result.digest.startswith("sha256:")


def test_pep740_for_another_file_digest_fails() -> None:
    result = verify_provenance(GCB_PROVENANCE, GCB_FILE, "0" * 64)
    assert result.check.outcome == "failed"
    assert "subject does not match" in result.check.evidence


def gcb(mutate: Callable[[dict[str, Any]], None]) -> bytes:
    doc = json.loads(GCB_PROVENANCE)
    mutate(doc)
    return json.dumps(doc).encode()


@pytest.mark.parametrize("mutate, outcome, why", [
    (lambda d: d["attestation_bundles"][0]["publisher"].update(email="attacker@developer.gserviceaccount.com"),
     "failed", "another publisher claimed: the certificate was issued to someone else"),
    (lambda d: d["attestation_bundles"][0]["attestations"][0]["envelope"].update(
        signature=base64.b64encode(b"\x30\x06\x02\x01\x01\x02\x01\x01").decode()),
     "failed", "signature replaced"),
    (lambda d: d["attestation_bundles"][0].update(attestations=[]), "failed", "no attestations"),
    (lambda d: d.update(attestation_bundles="nope"), "failed", "malformed"),
])
def test_tampered_pep740_provenance(mutate: Callable[[dict[str, Any]], None], outcome: str, why: str) -> None:
    assert verify_provenance(gcb(mutate), GCB_FILE, GCB_SHA256).check.outcome == outcome, why


def pypi_routes(provenance: bytes | None, digest: str = GCB_SHA256) -> dict[str, tuple[int, Any]]:
    url = f"https://pypi.org/integrity/gcb-attestation-test/0.0.0/{GCB_FILE}/provenance"
    routes: dict[str, tuple[int, Any]] = {
        "/pypi/gcb-attestation-test/0.0.0/json": (200, {
            "info": {"name": "gcb-attestation-test", "version": "0.0.0", "yanked": False},
            "urls": [{"filename": GCB_FILE, "packagetype": "sdist", "digests": {"sha256": digest},
                      "url": f"https://files.pythonhosted.org/packages/xx/{GCB_FILE}", "yanked": False}]}),
        "/simple/gcb-attestation-test/": (200, {
            "meta": {"api-version": "1.1"}, "name": "gcb-attestation-test",
            "files": [{"filename": GCB_FILE, "url": f"https://files.pythonhosted.org/packages/xx/{GCB_FILE}",
                       "hashes": {"sha256": digest}, "provenance": url}]}),
    }
    if provenance is not None:
        routes[f"/integrity/gcb-attestation-test/0.0.0/{GCB_FILE}/provenance"] = (200, provenance)
    return routes


def test_pypi_check_verifies_provenance_against_the_index_sha256_and_pins_the_publisher() -> None:
    pkg = check_pypi_package(serve(pypi_routes(GCB_PROVENANCE)), "gcb-attestation-test", "0.0.0")
    check = pkg.check("attestation")
    assert check is not None and check.outcome == "verified", check
    assert pkg.pins.publisher is not None and "919436158236-compute" in pkg.pins.publisher
    assert pkg.pins.attestation_digest is not None


def test_pypi_provenance_for_a_file_with_another_hash_fails_and_404_is_unavailable() -> None:
    swapped = check_pypi_package(serve(pypi_routes(GCB_PROVENANCE, digest="1" * 64)), "gcb-attestation-test",
                                 "0.0.0")
    assert swapped.check("attestation").outcome == "failed"  # type: ignore[union-attr]
    assert "I4" in [f.rule_id for f in check_findings(swapped)]
    missing = check_pypi_package(serve(pypi_routes(None)), "gcb-attestation-test", "0.0.0")
    assert missing.check("attestation").outcome == "unavailable"  # type: ignore[union-attr]
    assert missing.pins.publisher is None


def test_pep740_empty_bundle_naming_another_publisher_fails_and_is_never_pinned() -> None:
    extra = {"attestations": [], "publisher": {"kind": "GitHub", "repository": "attacker/evil",
                                               "workflow": "release.yml", "environment": None}}
    result = verify_provenance(gcb(lambda d: d["attestation_bundles"].append(extra)), GCB_FILE, GCB_SHA256)
    assert result.check.outcome == "failed" and result.publisher is None
    assert "attacker" not in result.check.evidence


def test_pep740_second_bundle_by_another_publisher_must_verify_too() -> None:
    def copy_as_github(d: dict[str, Any]) -> None:
        forged = copy.deepcopy(d["attestation_bundles"][0])
        forged["publisher"] = {"kind": "GitHub", "repository": "attacker/evil", "workflow": "release.yml",
                               "environment": None}
        d["attestation_bundles"].append(forged)
    result = verify_provenance(gcb(copy_as_github), GCB_FILE, GCB_SHA256)
    assert result.check.outcome == "failed"  # the certificate was issued to the Google account, not the repo
    assert result.publisher is None


def test_pep740_two_bundles_by_the_same_real_publisher_name_it_once() -> None:
    result = verify_provenance(gcb(lambda d: d["attestation_bundles"].append(copy.deepcopy(
        d["attestation_bundles"][0]))), GCB_FILE, GCB_SHA256)
    assert result.check.outcome == "verified"
    assert result.publisher is not None and result.publisher.identity.count("919436158236") == 1
