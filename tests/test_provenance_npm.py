"""npm registry checks against vendored REAL signed registry data (see tests/fixtures/provenance/npm/SOURCES.md).

Only the HTTP layer is mocked (httpx.MockTransport) to give the registry's shape: 200s, 404s, stripped fields."""

from __future__ import annotations

import copy
import json
from collections.abc import Callable
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

import httpx
import pytest

from scanner.provenance.npm import check_npm_package, packument_url, parse_sri
from scanner.provenance.npm_keys import KeyDataError, keyid_of, load_pinned_keys, parse_key, refresh_keys
from scanner.rules.provenance import check_findings

FIXTURES = Path(__file__).parent / "fixtures" / "provenance" / "npm"
TINY = json.loads((FIXTURES / "tiny-tarball.packument.json").read_text())
TINY_TGZ = (FIXTURES / "tiny-tarball-1.0.0.tgz").read_bytes()
VITE = json.loads((FIXTURES / "vite-7.1.3.packument.json").read_text())
NOW = datetime(2026, 1, 1, tzinfo=timezone.utc)


def registry(routes: dict[str, Any]) -> httpx.Client:
    """A client whose transport answers path → (status, body) like registry.npmjs.org; anything else is 404."""

    def handler(request: httpx.Request) -> httpx.Response:
        answer = routes.get(request.url.raw_path.decode())
        if answer is None:
            return httpx.Response(404, json={"error": "Not found"})
        status, body = answer
        return httpx.Response(status, content=body if isinstance(body, bytes) else json.dumps(body).encode())

    return httpx.Client(transport=httpx.MockTransport(handler))


def tiny_routes(packument: dict[str, Any] | None = None, tarball: bytes = TINY_TGZ) -> dict[str, Any]:
    return {"/tiny-tarball": (200, packument or TINY), "/tiny-tarball/-/tiny-tarball-1.0.0.tgz": (200, tarball)}


def outcome(pkg: Any, name: str) -> str:
    check = pkg.check(name)
    assert check is not None, name
    return check.outcome


def tampered(mutate: Callable[[dict[str, Any]], None], base: dict[str, Any] = TINY) -> dict[str, Any]:
    doc = copy.deepcopy(base)
    mutate(doc)
    return doc


def test_real_signed_packument_verifies() -> None:
    pkg = check_npm_package(registry(tiny_routes()), "tiny-tarball", "1.0.0", now=NOW)
    assert outcome(pkg, "integrity") == "verified"
    assert outcome(pkg, "registry-signature") == "verified"
    assert outcome(pkg, "attestation") == "absent"
    assert pkg.pins.integrity == TINY["versions"]["1.0.0"]["dist"]["integrity"]
    assert pkg.pins.shasum == "bbf102d5ae73afe2c553295e0fb02230216f65b1"
    assert pkg.pins.signature_keyid == "SHA256:jl3bwswu80PjjokCgh0o2w5c2U4LhQAE57gj9cz1kzA"
    assert pkg.pins.publisher == "bcoe"
    assert check_findings(pkg) == []


def test_real_signature_by_current_key_verifies() -> None:
    # vite's tarball is 2 MB and not vendored: only the signature over name@version:integrity is checked here.
    client = registry({"/vite": (200, VITE)})
    pkg = check_npm_package(client, "vite", "7.1.3", now=NOW)
    assert outcome(pkg, "registry-signature") == "verified"
    assert "SHA256:DhQ8wR5APBvFHLF/+Tc+AYvPOdTpcIDqOhxsBHRwC7U" in pkg.check("registry-signature").evidence
    assert outcome(pkg, "integrity") == "unavailable"  # tarball 404 in this mock: not checked, not a pass
    assert outcome(pkg, "attestation") == "unavailable"  # published but not verified offline yet
    assert pkg.pins.publisher == "GitHub Actions (trusted publisher: github)"


def test_tampered_tarball_is_I2() -> None:
    pkg = check_npm_package(registry(tiny_routes(tarball=TINY_TGZ + b"\0")), "tiny-tarball", "1.0.0", now=NOW)
    assert outcome(pkg, "integrity") == "failed"
    assert [f.rule_id for f in check_findings(pkg)] == ["I2"]
    assert pkg.pins.integrity is None  # a failed check pins nothing


def test_installed_bytes_given_by_caller_are_checked_instead_of_downloading() -> None:
    client = registry({"/tiny-tarball": (200, TINY)})  # no tarball route: a download would be a 404
    good = check_npm_package(client, "tiny-tarball", "1.0.0", tarball=TINY_TGZ, now=NOW)
    bad = check_npm_package(client, "tiny-tarball", "1.0.0", tarball=b"not the tarball", now=NOW)
    assert outcome(good, "integrity") == "verified"
    assert outcome(bad, "integrity") == "failed"


def test_shasum_mismatch_alone_is_I2() -> None:
    doc = tampered(lambda d: d["versions"]["1.0.0"]["dist"].update(shasum="0" * 40))
    pkg = check_npm_package(registry(tiny_routes(doc)), "tiny-tarball", "1.0.0", now=NOW)
    assert outcome(pkg, "integrity") == "failed"
    assert "sha1" in pkg.check("integrity").evidence


@pytest.mark.parametrize("mutate, why", [
    (lambda d: d["versions"]["1.0.0"]["dist"]["signatures"][0].update(
        sig=d["versions"]["1.0.0"]["dist"]["signatures"][0]["sig"][:-8] + "AAAAAAA="), "does not verify"),
    (lambda d: d["versions"]["1.0.0"]["dist"]["signatures"][0].update(keyid="SHA256:notARegistryKey"),
     "not a known registry key"),
    (lambda d: d["time"].update({"1.0.0": "2025-06-01T00:00:00.000Z"}), "expired"),
    (lambda d: d["versions"]["1.0.0"]["dist"]["signatures"][0].update(sig="%%%not base64%%%"), "does not verify"),
])
def test_tampered_signature_is_I3(mutate: Callable[[dict[str, Any]], None], why: str) -> None:
    pkg = check_npm_package(registry(tiny_routes(tampered(mutate))), "tiny-tarball", "1.0.0", now=NOW)
    assert outcome(pkg, "registry-signature") == "failed"
    assert why in pkg.check("registry-signature").evidence
    assert "I3" in [f.rule_id for f in check_findings(pkg)]


def test_integrity_swapped_with_matching_tarball_still_fails_the_signature() -> None:
    # An attacker who replaces tarball AND integrity passes I2 but cannot re-sign: I3 catches it.
    evil = b"evil tarball"
    import base64
    import hashlib
    integrity = "sha512-" + base64.b64encode(hashlib.sha512(evil).digest()).decode()

    def swap(d: dict[str, Any]) -> None:
        d["versions"]["1.0.0"]["dist"].update(integrity=integrity, shasum=hashlib.sha1(evil).hexdigest())

    pkg = check_npm_package(registry(tiny_routes(swap_doc := tampered(swap), tarball=evil)), "tiny-tarball",
                            "1.0.0", now=NOW)
    assert swap_doc["versions"]["1.0.0"]["dist"]["integrity"] == integrity
    assert outcome(pkg, "integrity") == "verified"
    assert outcome(pkg, "registry-signature") == "failed"


def test_signature_over_another_name_fails() -> None:
    doc = tampered(lambda d: None)
    doc["name"] = "tiny-tarbal1"
    client = registry({"/tiny-tarbal1": (200, doc), "/tiny-tarball/-/tiny-tarball-1.0.0.tgz": (200, TINY_TGZ)})
    pkg = check_npm_package(client, "tiny-tarbal1", "1.0.0", now=NOW)
    assert outcome(pkg, "registry-signature") == "failed"


def test_stripped_signatures_are_unavailable_never_verified() -> None:
    doc = tampered(lambda d: d["versions"]["1.0.0"]["dist"].pop("signatures"))
    pkg = check_npm_package(registry(tiny_routes(doc)), "tiny-tarball", "1.0.0", now=NOW)
    assert outcome(pkg, "registry-signature") == "unavailable"
    assert outcome(pkg, "attestation") == "unavailable"  # stripped signatures: absent attestations not trusted
    assert outcome(pkg, "integrity") == "verified"
    assert check_findings(pkg) == []


def test_404_makes_every_check_unavailable() -> None:
    pkg = check_npm_package(registry({}), "tiny-tarball", "1.0.0", now=NOW)
    assert {c.name: c.outcome for c in pkg.checks} == {
        "integrity": "unavailable", "registry-signature": "unavailable", "attestation": "unavailable"}
    assert "HTTP 404" in pkg.checks[0].evidence


def test_unknown_version_is_unavailable() -> None:
    pkg = check_npm_package(registry(tiny_routes()), "tiny-tarball", "9.9.9", now=NOW)
    assert all(c.outcome == "unavailable" for c in pkg.checks)
    assert "9.9.9" in pkg.checks[0].evidence


def test_tarball_off_the_registry_is_not_fetched() -> None:
    doc = tampered(lambda d: d["versions"]["1.0.0"]["dist"].update(tarball="https://evil.invalid/t.tgz"))
    pkg = check_npm_package(registry(tiny_routes(doc)), "tiny-tarball", "1.0.0", now=NOW)
    assert outcome(pkg, "integrity") == "unavailable"
    assert "off the registry" in pkg.check("integrity").evidence


def test_scoped_packument_url() -> None:
    assert packument_url("@modelcontextprotocol/server-filesystem") == \
        "https://registry.npmjs.org/@modelcontextprotocol%2Fserver-filesystem"


def test_sri_parsing_keeps_each_algorithm() -> None:
    assert parse_sri("sha1-AAA sha512-BBB") == {"sha1": "AAA", "sha512": "BBB"}
    assert parse_sri("md5-x") == {}


# --- pinned keys ---------------------------------------------------------------------------------------------

def test_pinned_keyids_are_the_keys_fingerprints_and_windows_are_kept() -> None:
    keys = load_pinned_keys()
    assert set(keys) == {"SHA256:jl3bwswu80PjjokCgh0o2w5c2U4LhQAE57gj9cz1kzA",
                         "SHA256:DhQ8wR5APBvFHLF/+Tc+AYvPOdTpcIDqOhxsBHRwC7U"}
    for keyid, key in keys.items():
        assert keyid_of(key.public_key) == keyid
    assert keys["SHA256:jl3bwswu80PjjokCgh0o2w5c2U4LhQAE57gj9cz1kzA"].expires == datetime(2025, 1, 29,
                                                                                           tzinfo=timezone.utc)
    assert keys["SHA256:DhQ8wR5APBvFHLF/+Tc+AYvPOdTpcIDqOhxsBHRwC7U"].expires is None


def _key_records() -> list[dict[str, Any]]:
    data = json.loads((Path(__file__).parents[1] / "scanner" / "data" / "npm_registry_keys.json").read_text())
    return data["keys"]


def test_key_record_with_wrong_keyid_is_refused() -> None:
    record = dict(_key_records()[1], keyid="SHA256:jl3bwswu80PjjokCgh0o2w5c2U4LhQAE57gj9cz1kzA")
    with pytest.raises(KeyDataError):
        parse_key(record, "registry")


def test_keys_endpoint_404_keeps_pinned_keys() -> None:
    pinned = load_pinned_keys()
    keys, note = refresh_keys(registry({}), pinned)
    assert keys == pinned
    assert "unavailable" in note and "HTTP 404" in note


def test_keys_endpoint_cannot_replace_pinned_material_but_may_shorten_a_window() -> None:
    from cryptography.hazmat.primitives.asymmetric import ec
    from cryptography.hazmat.primitives.serialization import Encoding, PublicFormat
    import base64
    pinned = load_pinned_keys()
    forged = ec.generate_private_key(ec.SECP256R1()).public_key()
    forged_record = {"expires": None, "keyid": keyid_of(forged), "keytype": "ecdsa-sha2-nistp256",
                     "scheme": "ecdsa-sha2-nistp256",
                     "key": base64.b64encode(forged.public_bytes(Encoding.DER,
                                                                 PublicFormat.SubjectPublicKeyInfo)).decode()}
    current = dict(_key_records()[1], expires="2030-01-01T00:00:00.000Z")
    client = registry({"/-/npm/v1/keys": (200, {"keys": [current, forged_record]})})
    keys, note = refresh_keys(client, pinned)
    assert keys[current["keyid"]].public_key.public_numbers() == pinned[current["keyid"]].public_key.public_numbers()
    assert keys[current["keyid"]].expires == datetime(2030, 1, 1, tzinfo=timezone.utc)
    assert keys[forged_record["keyid"]].source == "registry"
    assert "1 added" in note


@pytest.mark.parametrize(("published", "expected"), [
    ("2014-04-23T00:00:00", "verified"),  # no zone: the registry writes UTC
    ("2014-04-23", "verified"),
    ("not a time", "failed"),  # unknown publish time is now, as documented: the key had expired by then
    ("", "failed"),
])
def test_a_malformed_publish_time_is_read_or_unknown_never_a_crash(published: str, expected: str) -> None:
    """`time[version]` comes from the registry (or a mirror): a time without a zone, a date or garbage must not stop
    the provenance stage with TypeError/ValueError (the signature check compares it with the keys' expiry)."""
    packument = tampered(lambda d: d["time"].update({"1.0.0": published}))
    pkg = check_npm_package(registry(tiny_routes(packument)), "tiny-tarball", "1.0.0", now=NOW)
    assert outcome(pkg, "registry-signature") == expected


def test_a_key_record_whose_expiry_is_not_a_time_is_refused_not_read_as_never_expiring() -> None:
    record = json.loads((Path(__file__).parent.parent / "scanner" / "data" / "npm_registry_keys.json").read_text())
    key = dict(record["keys"][0], expires="soon")
    with pytest.raises(KeyDataError):
        parse_key(key, "registry")


def test_a_registry_answer_nested_past_the_parser_s_depth_is_unavailable_not_a_crash() -> None:
    """json.loads raises RecursionError (not ValueError) past its depth: a mirror's document nested that deep must
    read as "not JSON", as any other unreadable answer does."""
    deep = b"[" * 200_000 + b"]" * 200_000
    pkg = check_npm_package(registry({"/tiny-tarball": (200, deep)}), "tiny-tarball", "1.0.0", now=NOW)
    assert {c.outcome for c in pkg.checks} == {"unavailable"}
    from scanner.provenance.npm_attestations import Subject, verify_npm_attestations

    result = verify_npm_attestations(deep, Subject("tiny-tarball", "1.0.0", "0" * 128), keys=load_pinned_keys(),
                                     repository=None)
    assert result.check.outcome == "failed" and "not JSON" in result.check.evidence
