"""The in-toto Statement v1 we sign: subjects (package, lockfile, report) and a predicate of our own type."""

from __future__ import annotations

import base64
import binascii
import hashlib
from typing import Any
from urllib.parse import quote

from scanner import __version__
from scanner.lock.model import LockFile, ProvenancePins
from scanner.report.locations import purl
from scanner.report.model import Report

STATEMENT_TYPE = "https://in-toto.io/Statement/v1"
PREDICATE_TYPE = "urn:mcp-sandbox:predicate:scan:v1"
ROLE_ANNOTATION = "mcp-sandbox.role"
FILE_ROLES = ("lockfile", "report")


def file_subject(role: str, name: str, data: bytes) -> dict[str, Any]:
    return {"name": name, "digest": {"sha256": hashlib.sha256(data).hexdigest()},
            "annotations": {ROLE_ANNOTATION: role}}


def _sri_digest(integrity: str | None) -> dict[str, str]:
    """An npm SRI string (sha512-<base64>) as an in-toto digest ({"sha512": hex}); empty when unparseable."""
    if not integrity or "-" not in integrity:
        return {}
    algorithm, _, encoded = integrity.partition("-")
    try:
        return {algorithm: base64.b64decode(encoded, validate=True).hex()}
    except binascii.Error:
        return {}  # left out of the subject; the lock still records the integrity verbatim


def package_subjects(pins: ProvenancePins | None) -> list[dict[str, Any]]:
    """The installed package as subjects: npm by its integrity, PyPI one subject per installed file (sha256)."""
    if pins is None or not pins.ecosystem or not pins.package:
        return []
    base = purl(pins.ecosystem, pins.package, pins.version)
    annotations = {ROLE_ANNOTATION: "package"}
    subjects = []
    digest = _sri_digest(pins.integrity)
    if digest:
        subjects.append({"name": base, "digest": digest, "annotations": annotations})
    for file_name, sha256 in sorted(pins.sha256.items()):
        subjects.append({"name": f"{base}?file_name={quote(file_name, safe='')}",
                         "digest": {"sha256": sha256.lower()}, "annotations": annotations})
    return subjects


def _finding_counts(report: Report) -> dict[str, int]:
    return {level: sum(1 for f in report.findings if f.severity == level) for level in ("error", "warning", "info")}


def suppressions(report: Report) -> dict[str, Any] | None:
    """The config the verdict was reached under: its path and sha256, how it was given, each finding it suppressed
    (rule, tool, entry) and each suppression it was refused. None when no config was in use."""
    config = report.config
    if config is None:
        return None
    return {"config": {"path": config.path, "table": config.table, "sha256": config.sha256,
                       "explicit": config.explicit},
            "suppressed": [{"rule": f.rule_id, "tool": f.tool, "severity": f.severity, "entry": f.suppression.entry}
                           for f in report.suppressed],
            "refused": [{"rule": r.rule_id, "tool": r.tool, "entry": r.entry} for r in config.refused]}


def build_predicate(report: Report | None, lock: LockFile | None) -> dict[str, Any]:
    """Status (and the stages skipped), verdict, score, finding counts, the suppressions behind them, the sandbox
    policy as applied, the image digest and the scanner version."""
    applied = report.sandbox.applied if report and report.sandbox else (lock.sandbox_policy if lock else None)
    install = report.install if report else None
    image_digest = install.image_id if install else (lock.install.image_id if lock and lock.install else None)
    runtime_image = install.runtime_image if install else (lock.install.runtime_image if lock and lock.install
                                                            else None)
    return {
        "scanner": {"name": "mcp-sandbox", "version": __version__},
        "status": report.status if report else None,
        "skipped": [record.model_dump(mode="json") for record in report.skipped] if report else None,
        "verdict": report.verdict if report else None,
        "score": report.score.value if report and report.score else None,
        "findings": _finding_counts(report) if report else None,
        "suppressions": suppressions(report) if report else None,
        "tools": len(report.tools) if report else (len(lock.tools) if lock else None),
        "sandbox_policy": applied.as_dict() if applied else None,
        "image_digest": image_digest,
        "runtime_image": runtime_image,
    }


def build_statement(subjects: list[dict[str, Any]], predicate: dict[str, Any]) -> dict[str, Any]:
    return {"_type": STATEMENT_TYPE, "subject": subjects, "predicateType": PREDICATE_TYPE, "predicate": predicate}
