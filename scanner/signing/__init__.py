"""Signing: keys, DSSE envelopes around in-toto statements, and verification of the files they cover.

The names below are loaded on first use, so that importing one module of the package (`scanner.signing.dsse`, for
npm's attestations) does not load the others (attest loads the lock)."""

from __future__ import annotations

from importlib import import_module
from typing import Any

_HOMES = {"attestation_path": "attest", "envelope_outputs": "attest", "write_attestation": "attest", "Signer": "keys",
          "load_private_key_env": "keys", "load_private_key_file": "keys", "load_public_key": "keys",
          "load_signer": "keys", "write_keypair": "keys", "Verification": "verify", "VerificationFailed": "verify",
          "verify_attestation": "verify"}

__all__ = sorted(_HOMES)


def __getattr__(name: str) -> Any:
    home = _HOMES.get(name)
    if home is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    return getattr(import_module(f"{__name__}.{home}"), name)
