"""A job and its result as JSON, the only form they take on a broker or in a result backend (never pickle).

The coordinator sends `job_payload(job)`; a worker rebuilds the job with `job_from_payload`, runs it and sends back
`result_payload(result)`, whose report is capped at MAX_RESULT_REPORT_BYTES (a result backend is no place for a
64 MB document: a bigger report comes back as none, with an `error: …` line saying why, so the row fails with the
reason instead of the broker choking); the coordinator reads it with `result_from_payload`.
"""

from __future__ import annotations

from dataclasses import asdict, fields
from typing import Any

from scanner.batch.jobs import Job, JobResult, ScanSettings
from scanner.batch.targets import BatchTarget

MAX_RESULT_REPORT_BYTES = 16 * 1024 * 1024
MAX_STDERR_CHARS = 4096


class WireError(ValueError):
    """A payload that is not what this version of mcp-sandbox sends."""


def job_payload(job: Job) -> dict[str, Any]:
    target = job.target
    return {"key": job.key, "attempt": job.attempt,
            "target": {"target": target.target, "command": target.command,
                       "server_args": list(target.server_args), "origin": target.origin},
            "settings": {**asdict(job.settings), "extra_flags": list(job.settings.extra_flags)}}


def job_from_payload(payload: Any) -> Job:
    try:
        target, settings = payload["target"], dict(payload["settings"])
        batch_target = BatchTarget(_text(target["target"]), _optional_text(target["command"]),
                                   tuple(_text(a) for a in target["server_args"]), _text(target["origin"]))
        known = {f.name for f in fields(ScanSettings)}
        if set(settings) - known:
            raise WireError(f"unknown scan settings {sorted(set(settings) - known)}")
        settings["extra_flags"] = tuple(_text(flag) for flag in settings.get("extra_flags", ()))
        return Job(_text(payload["key"]), int(payload["attempt"]), batch_target, ScanSettings(**settings))
    except (KeyError, TypeError) as exc:
        raise WireError(f"not a scan job: {type(exc).__name__}: {exc}") from None


def result_payload(result: JobResult) -> dict[str, Any]:
    report, tail = result.report_json, result.stderr_tail[-MAX_STDERR_CHARS:]
    if report is not None and len(report.encode("utf-8")) > MAX_RESULT_REPORT_BYTES:
        tail += (f"\nerror: the report ({len(report.encode('utf-8'))} bytes) is larger than the "
                 f"{MAX_RESULT_REPORT_BYTES} bytes a worker sends back")
        report = None
    return {**asdict(result), "report_json": report, "stderr_tail": tail}


def result_from_payload(payload: Any) -> JobResult:
    try:
        report = payload["report_json"]
        return JobResult(_text(payload["key"]), int(payload["attempt"]), int(payload["exit_code"]),
                         _text(report) if report is not None else None,
                         _text(payload["stderr_tail"])[-MAX_STDERR_CHARS:], float(payload["seconds"]),
                         stopped=bool(payload.get("stopped", False)))
    except (KeyError, TypeError, ValueError) as exc:
        raise WireError(f"not a scan result: {type(exc).__name__}: {exc}") from None


def _text(value: Any) -> str:
    if not isinstance(value, str):
        raise WireError(f"expected text, got {type(value).__name__}")
    return value


def _optional_text(value: Any) -> str | None:
    return None if value is None else _text(value)
