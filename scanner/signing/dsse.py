"""DSSE envelopes (https://github.com/secure-systems-lab/dsse): the signature covers PAE(payloadType, payload)."""

from __future__ import annotations

import base64
import binascii
import json
from dataclasses import dataclass
from typing import Any

from scanner.signing.keys import PublicKey, Signer, keyid, signature_valid

IN_TOTO_PAYLOAD_TYPE = "application/vnd.in-toto+json"


class EnvelopeError(Exception):
    """The envelope is malformed or its signature does not verify (a verification failure, exit 1)."""


def pae(payload_type: str, payload: bytes) -> bytes:
    """DSSE v1 pre-authentication encoding: "DSSEv1" SP LEN(type) SP type SP LEN(body) SP body."""
    type_bytes = payload_type.encode("utf-8")
    return b"DSSEv1 %d %b %d %b" % (len(type_bytes), type_bytes, len(payload), payload)


@dataclass(frozen=True)
class Signature:
    keyid: str
    sig: bytes


@dataclass(frozen=True)
class Envelope:
    payload_type: str
    payload: bytes
    signatures: tuple[Signature, ...]

    def to_json(self) -> dict[str, Any]:
        return {
            "payload": base64.b64encode(self.payload).decode("ascii"),
            "payloadType": self.payload_type,
            "signatures": [{"keyid": s.keyid, "sig": base64.b64encode(s.sig).decode("ascii")} for s in self.signatures],
        }

    def to_bytes(self) -> bytes:
        return (json.dumps(self.to_json(), indent=2, sort_keys=True, ensure_ascii=True) + "\n").encode("ascii")


def sign(payload: bytes, signer: Signer, payload_type: str = IN_TOTO_PAYLOAD_TYPE) -> Envelope:
    return Envelope(payload_type, payload, (Signature(signer.keyid, signer.sign(pae(payload_type, payload))),))


def _b64decode(value: Any, field: str) -> bytes:
    """DSSE allows standard or URL-safe base64, padded or not."""
    if not isinstance(value, str):
        raise EnvelopeError(f"`{field}` is not a base64 string")
    padded = value + "=" * (-len(value) % 4)
    try:
        if "-" in value or "_" in value:
            return base64.urlsafe_b64decode(padded.encode("ascii"))
        return base64.b64decode(padded.encode("ascii"), validate=True)
    except (binascii.Error, UnicodeEncodeError, ValueError):
        raise EnvelopeError(f"`{field}` is not valid base64") from None


def _encodable(text: str) -> bool:
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        return False
    return True


def parse(data: bytes) -> Envelope:
    try:
        document = json.loads(data.decode("utf-8"))
    except (ValueError, RecursionError):  # UnicodeDecodeError, JSONDecodeError, an integer past Python's digit limit
        raise EnvelopeError("not valid JSON") from None
    if not isinstance(document, dict):
        raise EnvelopeError("not a JSON object")
    payload_type = document.get("payloadType")
    if not isinstance(payload_type, str):
        raise EnvelopeError("`payloadType` is missing")
    if not payload_type.isascii() and not _encodable(payload_type):  # JSON can carry a lone surrogate ("\ud800")
        raise EnvelopeError("`payloadType` is not valid Unicode")
    signatures = document.get("signatures")
    if not isinstance(signatures, list) or not signatures:
        raise EnvelopeError("`signatures` is missing or empty")
    parsed = []
    for index, entry in enumerate(signatures):
        if not isinstance(entry, dict):
            raise EnvelopeError(f"`signatures[{index}]` is not an object")
        entry_keyid = entry.get("keyid", "")
        parsed.append(Signature(entry_keyid if isinstance(entry_keyid, str) else "",
                                _b64decode(entry.get("sig"), f"signatures[{index}].sig")))
    return Envelope(payload_type, _b64decode(document.get("payload"), "payload"), tuple(parsed))


def verify(envelope: Envelope, key: PublicKey) -> bytes:
    """Return the payload when a signature verifies with key; raise EnvelopeError otherwise. A signature whose keyid
    names another key is skipped; an empty keyid is tried (DSSE makes keyid optional)."""
    expected = keyid(key)
    message = pae(envelope.payload_type, envelope.payload)
    for signature in envelope.signatures:
        if signature.keyid not in ("", expected):
            continue
        if signature_valid(key, signature.sig, message):
            return envelope.payload
    raise EnvelopeError(f"no signature verifies with key {expected}")
