"""Verify an attestation: the signature first, then each subject file's SHA-256, naming whichever fails."""

from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from scanner.errors import UsageError
from scanner.signing import dsse
from scanner.signing.keys import PublicKey, keyid
from scanner.signing.statement import FILE_ROLES, PREDICATE_TYPE, ROLE_ANNOTATION, STATEMENT_TYPE

MAX_ENVELOPE_BYTES = 64 * 1024 * 1024


class VerificationFailed(Exception):
    """The envelope itself does not verify (malformed, wrong key, tampered): exit 1, naming the envelope."""


@dataclass(frozen=True)
class SubjectCheck:
    role: str
    name: str
    path: Path | None
    ok: bool
    detail: str


@dataclass(frozen=True)
class Verification:
    keyid: str
    statement: dict[str, Any]
    checks: list[SubjectCheck] = field(default_factory=list)

    @property
    def failures(self) -> list[SubjectCheck]:
        return [c for c in self.checks if not c.ok]

    @property
    def ok(self) -> bool:
        return not self.failures


def verify_attestation(envelope_path: Path, key: PublicKey, files: dict[str, Path | None]) -> Verification:
    """files maps a role (lockfile, report) to the file to check; a role not given is looked up next to the
    envelope under the subject's own name."""
    statement = _verified_statement(envelope_path, key)
    subjects = _file_subjects(statement, envelope_path)
    checks = [_check(role, subjects.get(role), files.get(role), envelope_path) for role in FILE_ROLES
              if role in subjects or files.get(role) is not None]
    return Verification(keyid=keyid(key), statement=statement, checks=checks)


def _verified_statement(envelope_path: Path, key: PublicKey) -> dict[str, Any]:
    if not envelope_path.is_file():
        raise UsageError(f"envelope {envelope_path} does not exist (or is not a file)")
    if envelope_path.stat().st_size > MAX_ENVELOPE_BYTES:
        raise VerificationFailed(f"envelope {envelope_path}: too large to be an attestation")
    try:
        data = envelope_path.read_bytes()
    except OSError as exc:
        raise UsageError(f"cannot read envelope {envelope_path}: {exc.strerror or exc}") from None
    try:
        envelope = dsse.parse(data)
        payload = dsse.verify(envelope, key)
    except dsse.EnvelopeError as exc:
        raise VerificationFailed(f"envelope {envelope_path}: {exc}") from None
    if data != envelope.to_bytes():
        raise VerificationFailed(f"envelope {envelope_path}: its bytes differ from the form mcp-sandbox writes "
                                 "(edited or re-formatted after signing)")
    if envelope.payload_type != dsse.IN_TOTO_PAYLOAD_TYPE:
        raise VerificationFailed(f"envelope {envelope_path}: payloadType is not {dsse.IN_TOTO_PAYLOAD_TYPE}")
    try:
        statement = json.loads(payload.decode("utf-8"))
    except (ValueError, RecursionError):  # UnicodeDecodeError, JSONDecodeError, an integer past the digit limit
        raise VerificationFailed(f"envelope {envelope_path}: the signed payload is not JSON") from None
    if not isinstance(statement, dict) or statement.get("_type") != STATEMENT_TYPE:
        raise VerificationFailed(f"envelope {envelope_path}: the payload is not an in-toto Statement v1")
    if statement.get("predicateType") != PREDICATE_TYPE:
        raise VerificationFailed(f"envelope {envelope_path}: predicateType is not {PREDICATE_TYPE}")
    return statement


def _file_subjects(statement: dict[str, Any], envelope_path: Path) -> dict[str, dict[str, Any]]:
    subjects = statement.get("subject")
    if not isinstance(subjects, list):
        raise VerificationFailed(f"envelope {envelope_path}: the statement has no subject list")
    by_role: dict[str, dict[str, Any]] = {}
    for subject in subjects:
        if not isinstance(subject, dict):
            continue
        annotations = subject.get("annotations")
        role = annotations.get(ROLE_ANNOTATION) if isinstance(annotations, dict) else None
        if role in FILE_ROLES:
            by_role[role] = subject
    return by_role


def _plain_name(name: str) -> bool:
    """A bare file name: it cannot climb out of the envelope's directory."""
    return name not in ("", ".", "..") and not any(c in name for c in ("/", "\\", "\x00"))


def _check(role: str, subject: dict[str, Any] | None, given: Path | None, envelope_path: Path) -> SubjectCheck:
    if subject is None:
        return SubjectCheck(role, "", given, False, f"the envelope signs no {role}, so {given} is not covered")
    name = subject.get("name")
    digest = subject.get("digest")
    expected = digest.get("sha256") if isinstance(digest, dict) else None
    shown = name if isinstance(name, str) else "?"
    if not isinstance(expected, str):
        return SubjectCheck(role, shown, given, False, f"the {role} subject has no sha256 digest")
    path = given
    if path is None:
        if not isinstance(name, str) or not _plain_name(name):
            return SubjectCheck(role, shown, None, False, f"pass the {role} file explicitly (--{_flag(role)})")
        path = envelope_path.parent / name
    if not path.is_file():
        return SubjectCheck(role, shown, path, False, f"{path} does not exist; pass it with --{_flag(role)}")
    try:
        actual = _sha256(path)
    except OSError as exc:
        return SubjectCheck(role, shown, path, False, f"cannot read {path}: {exc.strerror or exc}")
    if actual != expected.lower():
        return SubjectCheck(role, shown, path, False, f"{path} does not match: sha256 {actual}, signed {expected}")
    return SubjectCheck(role, shown, path, True, f"{path} matches sha256 {actual}")


def _sha256(path: Path) -> str:
    with path.open("rb") as handle:
        return hashlib.file_digest(handle, "sha256").hexdigest()


def _flag(role: str) -> str:
    return "lock" if role == "lockfile" else role
