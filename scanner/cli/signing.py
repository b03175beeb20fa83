"""`mcp-sandbox keygen` and `mcp-sandbox verify` (cryptography and rich are imported when they run)."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, cast

import typer

from scanner.errors import UsageError
from sandbox.core.untrusted import escape_for_terminal

if TYPE_CHECKING:
    from rich.console import Console

    from scanner.signing.keys import Algorithm
    from scanner.signing.verify import Verification


def _console(stderr: bool = False) -> Console:
    from rich.console import Console

    return Console(stderr=stderr, highlight=False, soft_wrap=True, emoji=False)


def keygen(
    out: Path = typer.Option(..., "--out", help="Private key file to create; the public key goes to OUT.pub."),
    algorithm: str = typer.Option("ed25519", "--algorithm", help="ed25519 (default) or ecdsa-p256."),
) -> None:
    """Create a signing key pair (PEM): OUT (private, mode 0600) and OUT.pub."""
    from scanner.signing.keys import ALGORITHMS, write_keypair

    if algorithm not in ALGORITHMS:
        raise UsageError(f"--algorithm must be one of {', '.join(ALGORITHMS)}, not {algorithm!r}")
    private_path, public_path, key_id = write_keypair(out, cast("Algorithm", algorithm))
    console = _console()
    console.print(f"wrote private key {private_path} (mode 0600; keep it secret) and public key {public_path}",
                  markup=False)
    console.print(f"keyid {key_id}", markup=False)


def print_verification(console: Console, result: Verification) -> None:
    console.print(f"ok    signature  verified with key {result.keyid}", markup=False)
    for check in result.checks:
        status = "ok  " if check.ok else "FAIL"
        console.print(f"{status}  {check.role:<9}  {escape_for_terminal(check.detail)}", markup=False)
    if not result.checks:
        console.print("FAIL  the envelope signs no lockfile or report: nothing was checked", markup=False)


def _summary(result: Verification) -> str:
    predicate = result.statement.get("predicate")
    if not isinstance(predicate, dict):
        return ""
    scanner = predicate.get("scanner")
    if not isinstance(scanner, dict):
        scanner = {}
    parts = [f"status {predicate.get('status') or 'n/a'}", f"verdict {predicate.get('verdict') or 'n/a'}",
             f"scanner {scanner.get('version', '?')}"]
    return "signed statement: " + escape_for_terminal(", ".join(str(p) for p in parts))


def verify(
    envelope: Path = typer.Argument(..., metavar="ENVELOPE", help="The DSSE envelope (*.intoto.json)."),
    key: Path = typer.Option(..., "--key", help="The signer's public key (PEM)."),
    lock: Path | None = typer.Option(None, "--lock", help="The lockfile to check (default: next to the envelope)."),
    report: Path | None = typer.Option(None, "--report", help="The report to check (default: next to the envelope)."),
) -> None:
    """Check an attestation: its signature, then the SHA-256 of each file it covers. Exit 1 on any mismatch."""
    from scanner.signing.keys import load_public_key
    from scanner.signing.verify import VerificationFailed, verify_attestation

    public_key = load_public_key(key)
    console = _console()
    try:
        result = verify_attestation(envelope, public_key, {"lockfile": lock, "report": report})
    except VerificationFailed as exc:
        console.print(f"FAIL  {escape_for_terminal(str(exc))}", markup=False)
        raise typer.Exit(1) from None
    print_verification(console, result)
    if not result.ok or not result.checks:
        failed = ", ".join(c.role for c in result.failures) or "nothing checked"
        console.print(f"verification failed: {failed}", markup=False)
        raise typer.Exit(1)
    console.print(_summary(result), markup=False)


def register(app: typer.Typer) -> None:
    app.command("keygen")(keygen)
    app.command("verify")(verify)
