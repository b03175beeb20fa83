"""DSSE: PAE, sign -> verify, tampering, wrong keys, and interoperability with securesystemslib's implementation."""

from __future__ import annotations

import base64
import json

import pytest
from securesystemslib.dsse import Envelope as SslibEnvelope
from securesystemslib.exceptions import VerificationError as SslibVerificationError
from securesystemslib.signer import CryptoSigner, SSlibKey

from scanner.signing import dsse
from scanner.signing.keys import Algorithm, Signer, generate_private_key, keyid

ALGORITHMS: list[Algorithm] = ["ed25519", "ecdsa-p256"]
PAYLOAD = b'{"_type":"https://in-toto.io/Statement/v1","subject":[]}'


def test_pae_matches_the_dsse_spec_example() -> None:
    # From the DSSE protocol document: PAE("http://example.com/HelloWorld", "hello world").
    assert dsse.pae("http://example.com/HelloWorld", b"hello world") == \
        b"DSSEv1 29 http://example.com/HelloWorld 11 hello world"


def test_pae_counts_bytes_not_characters() -> None:
    assert dsse.pae("t\u00e9", b"\xc3\xa9") == b"DSSEv1 3 t\xc3\xa9 2 \xc3\xa9"


@pytest.mark.parametrize("algorithm", ALGORITHMS)
def test_sign_then_verify_round_trip(algorithm: Algorithm) -> None:
    signer = Signer(generate_private_key(algorithm))
    envelope = dsse.parse(dsse.sign(PAYLOAD, signer).to_bytes())
    assert envelope.payload_type == "application/vnd.in-toto+json"
    assert envelope.signatures[0].keyid == signer.keyid
    assert dsse.verify(envelope, signer.key.public_key()) == PAYLOAD


@pytest.mark.parametrize("algorithm", ALGORITHMS)
def test_wrong_key_fails(algorithm: Algorithm) -> None:
    envelope = dsse.sign(PAYLOAD, Signer(generate_private_key(algorithm)))
    other = generate_private_key(algorithm).public_key()
    with pytest.raises(dsse.EnvelopeError, match="no signature verifies"):
        dsse.verify(envelope, other)


def test_a_signature_under_a_blank_keyid_by_another_key_still_fails() -> None:
    signer = Signer(generate_private_key("ed25519"))
    document = json.loads(dsse.sign(PAYLOAD, signer).to_bytes())
    document["signatures"][0]["keyid"] = ""
    other = generate_private_key("ed25519").public_key()
    with pytest.raises(dsse.EnvelopeError):
        dsse.verify(dsse.parse(json.dumps(document).encode()), other)
    assert dsse.verify(dsse.parse(json.dumps(document).encode()), signer.key.public_key()) == PAYLOAD


@pytest.mark.parametrize("field", ["payload", "payloadType", "sig"])
def test_changing_any_signed_field_fails(field: str) -> None:
    signer = Signer(generate_private_key("ed25519"))
    document = json.loads(dsse.sign(PAYLOAD, signer).to_bytes())
    if field == "payload":
        document["payload"] = base64.b64encode(PAYLOAD.replace(b"[]", b"[1]")).decode()
    elif field == "payloadType":
        document["payloadType"] = "application/json"
    else:
        raw = bytearray(base64.b64decode(document["signatures"][0]["sig"]))
        raw[0] ^= 1
        document["signatures"][0]["sig"] = base64.b64encode(bytes(raw)).decode()
    with pytest.raises(dsse.EnvelopeError):
        dsse.verify(dsse.parse(json.dumps(document).encode()), signer.key.public_key())


@pytest.mark.parametrize("data,words", [(b"nope", "not valid JSON"), (b"[]", "not a JSON object"),
                                        (b'{"payloadType": "x", "payload": "", "signatures": []}', "empty"),
                                        (b'{"payloadType": "x", "payload": "!!", "signatures": [{"sig": ""}]}',
                                         "not valid base64"),
                                        (b'{"payloadType": "x", "n": ' + b"1" * 5000 + b"}", "not valid JSON"),
                                        (b'{"payloadType": "\\ud800", "payload": "", "signatures": [{"sig": ""}]}',
                                         "`payloadType` is not valid Unicode")])
def test_malformed_envelopes(data: bytes, words: str) -> None:
    with pytest.raises(dsse.EnvelopeError, match=words):
        dsse.parse(data)


@pytest.mark.parametrize("algorithm", ALGORITHMS)
def test_our_envelopes_verify_with_securesystemslib(algorithm: Algorithm) -> None:
    signer = Signer(generate_private_key(algorithm))
    document = json.loads(dsse.sign(PAYLOAD, signer).to_bytes())
    key = SSlibKey.from_crypto(signer.key.public_key(), keyid=signer.keyid)
    envelope = SslibEnvelope.from_dict(document)
    assert signer.keyid in envelope.verify([key], 1)
    assert envelope.payload == PAYLOAD
    wrong = Signer(generate_private_key(algorithm))
    with pytest.raises(SslibVerificationError):
        envelope.verify([SSlibKey.from_crypto(wrong.key.public_key(), keyid=signer.keyid)], 1)


@pytest.mark.parametrize("algorithm", ALGORITHMS)
def test_securesystemslib_envelopes_verify_with_ours(algorithm: Algorithm) -> None:
    private = generate_private_key(algorithm)
    public = SSlibKey.from_crypto(private.public_key(), keyid=keyid(private.public_key()))
    envelope = SslibEnvelope(PAYLOAD, dsse.IN_TOTO_PAYLOAD_TYPE, {})
    envelope.sign(CryptoSigner(private, public))
    ours = dsse.parse(json.dumps(envelope.to_dict()).encode())
    assert dsse.verify(ours, private.public_key()) == PAYLOAD
