"""Write the signed attestation (a DSSE envelope around an in-toto statement) for a lockfile and/or a report."""

from __future__ import annotations

import json
from pathlib import Path

from scanner.errors import UsageError
from scanner.atomic_write import atomic_write_bytes
from scanner.lock.build import pins_from_report
from scanner.lock.model import LockFile, ProvenancePins
from scanner.report.model import Report
from scanner.signing import dsse
from scanner.signing.keys import Signer
from scanner.signing.statement import build_predicate, build_statement, file_subject, package_subjects

ENVELOPE_SUFFIX = ".intoto.json"


def attestation_path(artifact: Path) -> Path:
    """Where the envelope for an artifact goes: next to it, `<name>.intoto.json`."""
    return artifact.with_name(artifact.name + ENVELOPE_SUFFIX)


def envelope_outputs(*artifacts: str | Path | None) -> list[tuple[Path, str]]:
    """The envelopes signing these files writes (a path each, for the output checks: never over an input such as the
    private key); None and `-` (stdout) have none."""
    return [(attestation_path(Path(a)), f"the envelope of {a}") for a in artifacts if a is not None and str(a) != "-"]


def _read(path: Path, role: str) -> bytes:
    if not path.is_file():
        raise UsageError(f"cannot sign the {role}: {path} does not exist")
    return path.read_bytes()


def statement_bytes(*, lock_path: Path | None, report_path: Path | None, report: Report | None,
                    lock: LockFile | None, provenance: ProvenancePins | None) -> bytes:
    pins = provenance or (lock.provenance if lock else None) or (pins_from_report(report) if report else None)
    subjects = package_subjects(pins)
    if lock_path is not None:
        subjects.append(file_subject("lockfile", lock_path.name, _read(lock_path, "lockfile")))
    if report_path is not None:
        subjects.append(file_subject("report", report_path.name, _read(report_path, "report")))
    if not any(s["annotations"]["mcp-sandbox.role"] in ("lockfile", "report") for s in subjects):
        raise UsageError("nothing to sign: give a lockfile or a report")
    statement = build_statement(subjects, build_predicate(report, lock))
    return json.dumps(statement, sort_keys=True, separators=(",", ":"), ensure_ascii=True).encode("ascii")


def write_attestation(signer: Signer, out: Path, *, lock_path: Path | None = None, report_path: Path | None = None,
                      report: Report | None = None, lock: LockFile | None = None,
                      provenance: ProvenancePins | None = None) -> Path:
    """Sign the files as they are on disk now (SHA-256 of their bytes) and write the envelope to out atomically."""
    payload = statement_bytes(lock_path=lock_path, report_path=report_path, report=report, lock=lock,
                              provenance=provenance)
    atomic_write_bytes(out, dsse.sign(payload, signer).to_bytes())
    return out
