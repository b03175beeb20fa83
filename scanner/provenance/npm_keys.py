"""The npm registry's signing keys: pinned with their validity windows, refreshed only when the endpoint answers."""

from __future__ import annotations

import base64
import binascii
import hashlib
import json
from dataclasses import dataclass, replace
from datetime import datetime, timezone
from importlib import resources
from pathlib import Path
from typing import Any, Literal

import httpx
from cryptography.hazmat.primitives.asymmetric import ec
from cryptography.hazmat.primitives.serialization import Encoding, PublicFormat, load_der_public_key

from scanner.registry.client import fetch
from scanner.registry.endpoints import DEFAULT_ENDPOINTS, RegistryEndpoints


@dataclass(frozen=True)
class RegistryKey:
    keyid: str
    public_key: ec.EllipticCurvePublicKey
    expires: datetime | None
    source: Literal["pinned", "registry"] = "pinned"


class KeyDataError(ValueError):
    """A key record that is malformed or whose keyid does not match its key."""


def keyid_of(public_key: ec.EllipticCurvePublicKey) -> str:
    """npm's keyid: SHA256: + unpadded base64 of SHA-256 over the key's SSH wire format (as ssh-keygen -l shows)."""
    openssh = public_key.public_bytes(Encoding.OpenSSH, PublicFormat.OpenSSH)
    blob = base64.b64decode(openssh.split()[1])
    return "SHA256:" + base64.b64encode(hashlib.sha256(blob).digest()).decode().rstrip("=")


def parse_time(text: str | None) -> datetime | None:
    """An ISO-8601 time as the registry writes it (2025-01-29T00:00:00.000Z), or None when there is none or it is
    not a time. The text comes from the registry or a mirror and is compared with the keys' (aware) expiry: a time
    without a zone is UTC, as the registry writes it, and garbage is unknown (which the checks read as now), never a
    TypeError or ValueError that stops the provenance stage."""
    if not text:
        return None
    try:
        parsed = datetime.fromisoformat(text.replace("Z", "+00:00"))
    except ValueError:
        return None
    return parsed if parsed.tzinfo is not None else parsed.replace(tzinfo=timezone.utc)


def parse_key(record: dict[str, Any], source: Literal["pinned", "registry"]) -> RegistryKey:
    """One key record of the registry's keys document; the stated keyid must be the key's own fingerprint."""
    try:
        if record.get("keytype") != "ecdsa-sha2-nistp256":
            raise KeyDataError(f"unsupported keytype {record.get('keytype')!r}")
        key = load_der_public_key(base64.b64decode(record["key"], validate=True))
        if not isinstance(key, ec.EllipticCurvePublicKey) or key.curve.name != "secp256r1":
            raise KeyDataError("not a P-256 public key")
        keyid = keyid_of(key)
        if record.get("keyid") != keyid:
            raise KeyDataError(f"keyid {record.get('keyid')!r} does not match the key ({keyid})")
        expires = record.get("expires")
        valid_until = parse_time(expires) if isinstance(expires, str) else None
        if expires is not None and valid_until is None:  # unreadable is not "never expires"
            raise KeyDataError(f"expires {str(expires)[:40]!r} is not a time")
        return RegistryKey(keyid, key, valid_until, source)
    except (KeyError, TypeError, binascii.Error) as exc:
        raise KeyDataError(f"malformed key record: {exc.__class__.__name__}") from exc


def load_pinned_keys(path: Path | None = None) -> dict[str, RegistryKey]:
    """The pinned keys shipped in scanner/data/npm_registry_keys.json (or path), by keyid."""
    text = path.read_text("utf-8") if path else resources.files("scanner.data").joinpath(
        "npm_registry_keys.json").read_text("utf-8")
    keys = [parse_key(r, "pinned") for r in json.loads(text)["keys"]]
    return {k.keyid: k for k in keys}


def refresh_keys(client: httpx.Client, pinned: dict[str, RegistryKey],
                 endpoints: RegistryEndpoints = DEFAULT_ENDPOINTS) -> tuple[dict[str, RegistryKey], str]:
    """Merge in the registry's current keys when the endpoint answers; say what happened.

    A fetched key never replaces a pinned key's material; it may only shorten a pinned key's validity.
    """
    got = fetch(client, endpoints.npm_keys(), accept="application/json", max_bytes=1024 * 1024)
    if not got.ok:
        return dict(pinned), f"keys endpoint unavailable ({got.reason}); pinned keys used"
    try:
        records = got.json()["keys"]
        fetched = [parse_key(r, "registry") for r in records]
    except (ValueError, KeyError, TypeError) as exc:
        return dict(pinned), f"keys endpoint answered unreadable data ({exc.__class__.__name__}); pinned keys used"
    merged = dict(pinned)
    for key in fetched:
        old = merged.get(key.keyid)
        if old is None:
            merged[key.keyid] = key
        elif key.expires and (old.expires is None or key.expires < old.expires):
            merged[key.keyid] = replace(old, expires=key.expires)
    added = len(merged) - len(pinned)
    return merged, f"keys endpoint answered {len(fetched)} key(s); {added} added to the pinned keys"
