"""Signing: keys, DSSE envelopes around in-toto statements, and verification of the files they cover."""

from scanner.signing.attest import attestation_path, write_attestation
from scanner.signing.keys import (Signer, load_private_key_env, load_private_key_file, load_public_key, load_signer,
                                  write_keypair)
from scanner.signing.verify import Verification, VerificationFailed, verify_attestation

__all__ = ["Signer", "Verification", "VerificationFailed", "attestation_path", "load_private_key_env",
           "load_private_key_file", "load_public_key", "load_signer", "verify_attestation", "write_attestation",
           "write_keypair"]
