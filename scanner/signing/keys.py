"""Signing keys: Ed25519 or ECDSA P-256 as PEM, keyid = SHA-256 of the DER public key. Key material is never printed:
every error names the file or variable, never its content."""

from __future__ import annotations

import base64
import binascii
import hashlib
import os
from dataclasses import dataclass
from pathlib import Path
from typing import Literal, cast, get_args

from cryptography.exceptions import InvalidSignature, UnsupportedAlgorithm
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec, ed25519

from scanner.errors import UsageError

Algorithm = Literal["ed25519", "ecdsa-p256"]
ALGORITHMS: tuple[str, ...] = get_args(Algorithm)
PrivateKey = ed25519.Ed25519PrivateKey | ec.EllipticCurvePrivateKey
PublicKey = ed25519.Ed25519PublicKey | ec.EllipticCurvePublicKey
PRIVATE_KEY_MODE = 0o600
PUBLIC_KEY_MODE = 0o644
MAX_KEY_BYTES = 64 * 1024
SUPPORTED = "an unencrypted PEM Ed25519 or ECDSA P-256 key"


def generate_private_key(algorithm: Algorithm) -> PrivateKey:
    if algorithm == "ed25519":
        return ed25519.Ed25519PrivateKey.generate()
    return ec.generate_private_key(ec.SECP256R1())


def private_pem(key: PrivateKey) -> bytes:
    return key.private_bytes(serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8,
                             serialization.NoEncryption())


def public_pem(key: PublicKey) -> bytes:
    return key.public_bytes(serialization.Encoding.PEM, serialization.PublicFormat.SubjectPublicKeyInfo)


def keyid(key: PublicKey) -> str:
    """Hex SHA-256 of the DER SubjectPublicKeyInfo."""
    der = key.public_bytes(serialization.Encoding.DER, serialization.PublicFormat.SubjectPublicKeyInfo)
    return hashlib.sha256(der).hexdigest()


def public_path_for(private_path: Path) -> Path:
    return private_path.with_name(private_path.name + ".pub")


def write_keypair(out: Path, algorithm: Algorithm) -> tuple[Path, Path, str]:
    """Write NAME (private, mode 0600, created exclusively) and NAME.pub; return both paths and the keyid. A failure
    leaves neither file behind (a lone private key would make the next run refuse NAME)."""
    if not out.name:
        raise UsageError(f"--out {out} names no file; give a file name such as ci-signing")
    public_path = public_path_for(out)
    for path in (out, public_path):
        if os.path.lexists(path):  # a dangling symlink too: O_EXCL refuses it, and it points elsewhere
            raise UsageError(_exists(path))
    if not out.parent.is_dir():
        raise UsageError(f"directory {out.parent} does not exist; create it or pick another --out")
    key = generate_private_key(algorithm)
    _write_new_file(out, private_pem(key), PRIVATE_KEY_MODE)
    try:
        _write_new_file(public_path, public_pem(key.public_key()), PUBLIC_KEY_MODE)
    except UsageError:
        out.unlink(missing_ok=True)
        raise
    return out, public_path, keyid(key.public_key())


def _exists(path: Path) -> str:
    return f"{path} already exists; pick another --out name or move the old key away"


def _write_new_file(path: Path, data: bytes, mode: int) -> None:
    """Create path exclusively (never through a symlink) with exactly mode; on any error remove what was written."""
    try:
        fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW, mode)
    except FileExistsError:
        raise UsageError(_exists(path)) from None
    except OSError as exc:
        raise UsageError(f"cannot create {path}: {exc.strerror}") from None
    try:
        os.fchmod(fd, mode)  # the umask can only remove bits; make the mode exact
        view = memoryview(data)
        while view:
            view = view[os.write(fd, view):]
        os.fsync(fd)
    except OSError as exc:
        path.unlink(missing_ok=True)
        raise UsageError(f"cannot write {path}: {exc.strerror}") from None
    finally:
        os.close(fd)


def _supported_private(key: object, source: str) -> PrivateKey:
    if _supported(key, ed25519.Ed25519PrivateKey, ec.EllipticCurvePrivateKey):
        return cast(PrivateKey, key)
    raise UsageError(f"{source} holds a key of an unsupported type; use {SUPPORTED} (see `mcp-sandbox keygen`)")


def _supported_public(key: object, source: str) -> PublicKey:
    if _supported(key, ed25519.Ed25519PublicKey, ec.EllipticCurvePublicKey):
        return cast(PublicKey, key)
    raise UsageError(f"{source} holds a public key of an unsupported type; use an Ed25519 or ECDSA P-256 key")


def _supported(key: object, ed25519_type: type, ec_type: type) -> bool:
    """An Ed25519 key, or an elliptic-curve key on P-256 (the two algorithms signing supports)."""
    return isinstance(key, ed25519_type) or (isinstance(key, ec_type)
                                             and isinstance(getattr(key, "curve", None), ec.SECP256R1))


def _parse_private(data: bytes, source: str) -> PrivateKey:
    try:
        key = serialization.load_pem_private_key(data, password=None)
    except TypeError:
        raise UsageError(f"{source} is an encrypted private key; use {SUPPORTED}") from None
    except (ValueError, UnsupportedAlgorithm):
        raise UsageError(f"{source} is not {SUPPORTED}") from None
    return _supported_private(key, source)


def _read_key_file(path: Path, what: str) -> bytes:
    if not path.is_file():
        raise UsageError(f"{what} {path} does not exist (or is not a file)")
    if path.stat().st_size > MAX_KEY_BYTES:
        raise UsageError(f"{what} {path} is too large to be a key")
    try:
        return path.read_bytes()
    except OSError as exc:
        raise UsageError(f"cannot read {what} {path}: {exc.strerror or exc}") from None


def load_private_key_file(path: Path) -> PrivateKey:
    return _parse_private(_read_key_file(path, "signing key"), f"signing key {path}")


def load_private_key_env(variable: str, environ: dict[str, str] | None = None) -> PrivateKey:
    """The PEM text of a private key from an environment variable (or its base64, for CI secrets stores)."""
    value = (environ if environ is not None else os.environ).get(variable)
    source = f"environment variable {variable}"
    if not value:
        raise UsageError(f"{source} is not set or empty; set it to {SUPPORTED}")
    data = value.encode("utf-8")
    if b"-----BEGIN" not in data:
        try:
            data = base64.b64decode(b"".join(data.split()), validate=True)  # `base64` wraps its output at 76
        except binascii.Error:
            raise UsageError(f"{source} is neither PEM nor base64-encoded PEM; set it to {SUPPORTED}") from None
    return _parse_private(data, source)


def load_public_key(path: Path) -> PublicKey:
    data = _read_key_file(path, "public key")
    source = f"public key {path}"
    if b"PRIVATE KEY-----" in data:
        raise UsageError(f"{path} is a private key; pass the public key (the .pub file) with --key")
    if (blocks := data.count(b"-----BEGIN ")) > 1:  # the PEM reader takes the first and ignores the rest
        raise UsageError(f"{source} holds {blocks} PEM blocks; give a file with exactly one public key")
    try:
        key = serialization.load_pem_public_key(data)
    except (ValueError, UnsupportedAlgorithm):
        raise UsageError(f"{source} is not a PEM Ed25519 or ECDSA P-256 public key") from None
    return _supported_public(key, source)


@dataclass(frozen=True)
class Signer:
    key: PrivateKey

    @property
    def keyid(self) -> str:
        return keyid(self.key.public_key())

    def sign(self, data: bytes) -> bytes:
        if isinstance(self.key, ed25519.Ed25519PrivateKey):
            return self.key.sign(data)
        return self.key.sign(data, ec.ECDSA(hashes.SHA256()))


def signature_valid(key: PublicKey, signature: bytes, data: bytes) -> bool:
    """Ed25519 (raw 64-byte) or ECDSA P-256 with SHA-256 (DER) signature check."""
    try:
        if isinstance(key, ed25519.Ed25519PublicKey):
            key.verify(signature, data)
        else:
            key.verify(signature, data, ec.ECDSA(hashes.SHA256()))
    except InvalidSignature:
        return False
    return True


def load_signer(key_file: Path | None, env_var: str | None) -> Signer | None:
    """The signer chosen by --sign KEY or --sign-env VAR (at most one), or None when neither is given."""
    if key_file is not None and env_var is not None:
        raise UsageError("give either --sign KEY or --sign-env VAR, not both")
    if key_file is not None:
        return Signer(load_private_key_file(key_file))
    if env_var is not None:
        return Signer(load_private_key_env(env_var))
    return None
