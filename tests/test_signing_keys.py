"""keygen: Ed25519 / ECDSA P-256 PEM pairs, 0600 private keys, keyid = SHA-256 of the DER public key; loading keys
from files and environment variables without ever echoing them."""

from __future__ import annotations

import base64
import hashlib
import stat
from pathlib import Path

import pytest
from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric import ec, ed25519, rsa

from scanner.errors import UsageError
from scanner.signing.keys import (Signer, load_private_key_env, load_private_key_file, load_public_key, load_signer,
                                  signature_valid, write_keypair)


@pytest.mark.parametrize("algorithm,key_type", [("ed25519", ed25519.Ed25519PrivateKey),
                                                ("ecdsa-p256", ec.EllipticCurvePrivateKey)])
def test_keygen_writes_a_pem_pair_with_a_0600_private_key(tmp_path: Path, algorithm: str, key_type: type) -> None:
    private_path, public_path, key_id = write_keypair(tmp_path / "signing", algorithm)  # type: ignore[arg-type]
    assert public_path == tmp_path / "signing.pub"
    assert stat.S_IMODE(private_path.stat().st_mode) == 0o600
    assert private_path.read_bytes().startswith(b"-----BEGIN PRIVATE KEY-----")
    assert public_path.read_bytes().startswith(b"-----BEGIN PUBLIC KEY-----")
    private = load_private_key_file(private_path)
    assert isinstance(private, key_type)
    der = private.public_key().public_bytes(serialization.Encoding.DER,
                                            serialization.PublicFormat.SubjectPublicKeyInfo)
    assert key_id == hashlib.sha256(der).hexdigest() == Signer(private).keyid


def test_keygen_is_0600_even_with_a_permissive_umask(tmp_path: Path) -> None:
    import os
    previous = os.umask(0)
    try:
        private_path, _, _ = write_keypair(tmp_path / "k", "ed25519")
    finally:
        os.umask(previous)
    assert stat.S_IMODE(private_path.stat().st_mode) == 0o600


def test_keygen_never_overwrites(tmp_path: Path) -> None:
    (tmp_path / "k.pub").write_text("keep me")
    with pytest.raises(UsageError, match="already exists"):
        write_keypair(tmp_path / "k", "ed25519")
    assert (tmp_path / "k.pub").read_text() == "keep me" and not (tmp_path / "k").exists()


@pytest.mark.parametrize("which", ["k", "k.pub"])
def test_keygen_refuses_a_dangling_symlink_and_writes_nothing(tmp_path: Path, which: str) -> None:
    """A dangling symlink passed exists() and then made O_EXCL fail: exit 3 "internal error", and for k.pub a lone
    private key k left behind."""
    (tmp_path / which).symlink_to(tmp_path / "elsewhere")
    with pytest.raises(UsageError, match="already exists"):
        write_keypair(tmp_path / "k", "ed25519")
    assert sorted(p.name for p in tmp_path.iterdir()) == [which]


def test_keygen_leaves_no_private_key_when_the_public_key_cannot_be_written(tmp_path: Path) -> None:
    out = tmp_path / ("k" * 252)  # NAME is allowed (255 bytes at most), NAME.pub is not
    with pytest.raises(UsageError, match="cannot create .*File name too long"):
        write_keypair(out, "ed25519")
    assert list(tmp_path.iterdir()) == []
    with pytest.raises(UsageError, match="names no file"):
        write_keypair(Path("."), "ed25519")


@pytest.mark.parametrize("algorithm", ["ed25519", "ecdsa-p256"])
def test_sign_and_check_raw_signatures(tmp_path: Path, algorithm: str) -> None:
    private_path, public_path, _ = write_keypair(tmp_path / "k", algorithm)  # type: ignore[arg-type]
    signer = Signer(load_private_key_file(private_path))
    signature = signer.sign(b"message")
    public = load_public_key(public_path)
    assert signature_valid(public, signature, b"message")
    assert not signature_valid(public, signature, b"messagf")


def test_key_from_environment_as_pem_or_base64(tmp_path: Path) -> None:
    private_path, _, key_id = write_keypair(tmp_path / "k", "ed25519")
    pem = private_path.read_text()
    assert Signer(load_private_key_env("SIGN_KEY", {"SIGN_KEY": pem})).keyid == key_id
    encoded = base64.b64encode(pem.encode()).decode()
    assert Signer(load_private_key_env("SIGN_KEY", {"SIGN_KEY": encoded})).keyid == key_id


def test_key_from_environment_as_wrapped_base64(tmp_path: Path) -> None:
    """`base64 KEY` (GNU coreutils wraps at 76 columns) gave a value with newlines, refused as "neither PEM nor base64"."""
    private_path, _, _ = write_keypair(tmp_path / "k", "ecdsa-p256")
    encoded = base64.encodebytes(private_path.read_bytes()).decode()  # 76-column lines, as `base64` writes them
    assert "\n" in encoded.strip()
    key = load_private_key_env("SIGNING_KEY", {"SIGNING_KEY": encoded})
    assert Signer(key).keyid == Signer(load_private_key_file(private_path)).keyid


def test_load_signer_from_options(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    private_path, _, key_id = write_keypair(tmp_path / "k", "ed25519")
    monkeypatch.setenv("MCP_SANDBOX_TEST_KEY", private_path.read_text())
    assert load_signer(None, None) is None
    assert load_signer(private_path, None).keyid == key_id  # type: ignore[union-attr]
    assert load_signer(None, "MCP_SANDBOX_TEST_KEY").keyid == key_id  # type: ignore[union-attr]
    with pytest.raises(UsageError, match="not both"):
        load_signer(private_path, "MCP_SANDBOX_TEST_KEY")


def test_key_errors_never_contain_the_key(tmp_path: Path) -> None:
    secret = "-----BEGIN PRIVATE KEY-----\nTOPSECRETMATERIAL\n-----END PRIVATE KEY-----\n"
    with pytest.raises(UsageError) as exc:
        load_private_key_env("SIGN_KEY", {"SIGN_KEY": secret})
    assert "TOPSECRET" not in str(exc.value) and "SIGN_KEY" in str(exc.value)
    path = tmp_path / "bad"
    path.write_text(secret)
    with pytest.raises(UsageError) as exc:
        load_private_key_file(path)
    assert "TOPSECRET" not in str(exc.value) and str(path) in str(exc.value)


def test_unset_environment_variable() -> None:
    with pytest.raises(UsageError, match="NOPE is not set"):
        load_private_key_env("NOPE", {})


def test_unsupported_and_encrypted_keys_are_refused(tmp_path: Path) -> None:
    rsa_key = rsa.generate_private_key(public_exponent=65537, key_size=2048)
    p384 = ec.generate_private_key(ec.SECP384R1())
    encrypted = ed25519.Ed25519PrivateKey.generate().private_bytes(
        serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8,
        serialization.BestAvailableEncryption(b"pw"))
    cases = {
        "rsa": (rsa_key.private_bytes(serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8,
                                      serialization.NoEncryption()), "unsupported type"),
        "p384": (p384.private_bytes(serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8,
                                    serialization.NoEncryption()), "unsupported type"),
        "enc": (encrypted, "encrypted"),
    }
    for name, (data, words) in cases.items():
        (tmp_path / name).write_bytes(data)
        with pytest.raises(UsageError, match=words):
            load_private_key_file(tmp_path / name)


def test_public_key_loading_refuses_a_private_key(tmp_path: Path) -> None:
    private_path, _, _ = write_keypair(tmp_path / "k", "ed25519")
    with pytest.raises(UsageError, match="is a private key"):
        load_public_key(private_path)
    with pytest.raises(UsageError, match="does not exist"):
        load_public_key(tmp_path / "missing.pub")


def test_a_public_key_file_with_several_keys_is_refused(tmp_path: Path) -> None:
    """Only the first PEM block was read: keys.pub holding [old, new] verified old's signatures and silently failed
    new's, as if the file were a key ring."""
    _, first, _ = write_keypair(tmp_path / "a", "ed25519")
    _, second, _ = write_keypair(tmp_path / "b", "ecdsa-p256")
    both = tmp_path / "both.pub"
    both.write_bytes(first.read_bytes() + second.read_bytes())
    with pytest.raises(UsageError, match="holds 2 PEM blocks; give a file with exactly one public key"):
        load_public_key(both)
