#!/usr/bin/env python3
"""Run one batch of real npm and PyPI servers twice, embedded and through Celery, and record that both give the
same verdicts (issue 15's done-when): tests/data/batch_corpus.json.

The servers are the scan corpus's (scripts/scan_corpus.py, reviewed in tests/test_scan_corpus.py) with pinned
versions, less desktop-commander (its telemetry lands on whichever call is running, so its findings move between
tools from run to run; it is no test of the batch), plus three more small real servers. For each mode this runs

    mcp-sandbox batch TARGETS --out DIR/embedded --retries 1                 (--jobs from the machine's defaults)
    mcp-sandbox batch TARGETS --out DIR/celery --broker redis://… --retries 1  (two local `mcp-sandbox worker`s)

on a private redis-server on a free loopback port (tests/celery_helpers.py; scripts/ensure-redis.sh installs it),
and compares, target by target, the state, status, verdict, score and the findings (rule, severity, tool). The
recording holds both modes' per-target results, the comparison, the wall times, the date and the machine;
tests/test_batch_corpus.py reviews it, and its live test runs a small subset the same way.

Needs a container engine and the npm/PyPI registries. Heavy: at most two scans at once per mode (the modes run one
after the other).

    .venv/bin/python scripts/batch_corpus.py                          # the whole corpus, recorded
    .venv/bin/python scripts/batch_corpus.py --only mcp-server-time --record /tmp/batch.json
"""

from __future__ import annotations

import argparse
import datetime
import json
import os
import platform
import subprocess
import sys
import tempfile
import time
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
from tests.celery_helpers import redis_server, workers  # noqa: E402  (the tests' real redis-server and workers)

RECORDING = ROOT / "tests" / "data" / "batch_corpus.json"
CLI = [sys.executable, "-m", "scanner"]
BATCH_TIMEOUT = 3 * 3600
WORKERS = 2
SCHEMA = 1


@dataclass(frozen=True)
class Server:
    name: str
    line: str  # the batch input line: TARGET [-- ARGS]


SERVERS = [
    Server("server-filesystem", "npm:@modelcontextprotocol/server-filesystem@2026.8.31 -- /workspace"),
    Server("server-everything", "npm:@modelcontextprotocol/server-everything@2026.8.31 -- stdio"),
    Server("server-memory", "npm:@modelcontextprotocol/server-memory@2026.8.31"),
    Server("server-sequential-thinking", "npm:@modelcontextprotocol/server-sequential-thinking@2026.8.31"),
    Server("mcp-server-code-runner", "npm:mcp-server-code-runner@0.1.8"),
    Server("context7-mcp", "npm:@upstash/context7-mcp@1.0.14"),
    Server("mcp-server-git", "pypi:mcp-server-git==2026.10.19 -- --repository /workspace/projects/demo-repo"),
    Server("mcp-server-time", "pypi:mcp-server-time==2026.10.19"),
    Server("mcp-server-fetch", "pypi:mcp-server-fetch==2026.10.24"),
    Server("markitdown-mcp", "pypi:markitdown-mcp==0.0.1a8"),
    Server("duckduckgo-mcp-server", "pypi:duckduckgo-mcp-server==0.7.0"),
    Server("mcp-server-calculator", "pypi:mcp-server-calculator==0.2.1"),
]


def machine() -> dict[str, Any]:
    load = os.getloadavg()
    return {"host": platform.node(), "cores": os.cpu_count(), "platform": platform.platform(),
            "python": platform.python_version(), "load_at_start": [round(x, 2) for x in load]}


def write_targets(servers: Sequence[Server], path: Path) -> Path:
    path.write_text("# scripts/batch_corpus.py\n" + "".join(f"{s.line}\n" for s in servers), encoding="utf-8")
    return path


def run_batch(targets: Path, out: Path, *extra: str, timeout: float = BATCH_TIMEOUT) -> dict[str, Any]:
    """One `mcp-sandbox batch` run: its exit code, wall seconds and last stderr lines."""
    started = time.monotonic()
    done = subprocess.run([*CLI, "batch", str(targets), "--out", str(out), "--retries", "1", *extra], cwd=ROOT,
                          stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True, timeout=timeout, check=False)
    return {"exit": done.returncode, "wall_seconds": round(time.monotonic() - started, 1),
            "stderr_tail": done.stderr.splitlines()[-12:]}


def finding_ids(report: dict[str, Any]) -> list[str]:
    """The report's findings as `RULE:severity:tool`, sorted (a multiset: one entry a finding)."""
    return sorted(f"{f['rule_id']}:{f['severity']}:{f.get('tool') or '-'}" for f in report.get("findings") or [])


def results(out: Path) -> dict[str, dict[str, Any]]:
    """Per target (its input line) what the batch recorded: summary.json's row and the report's findings."""
    summary = json.loads((out / "summary.json").read_text(encoding="utf-8"))
    found = {}
    for entry in summary["targets"]:
        report = json.loads((out / entry["report"]).read_text(encoding="utf-8")) if entry.get("report") else {}
        install = report.get("install") or {}
        timings = report.get("timings") or {}
        found[entry["target"]] = {
            "state": entry["state"], "status": entry["status"], "verdict": entry["verdict"], "score": entry["score"],
            "version": entry["version"], "attempts": entry["attempts"], "error": entry["error"],
            "findings": finding_ids(report), "install_cached": install.get("cached"),
            "seconds": entry["seconds"], "scan_seconds": entry["scan_seconds"], "install_seconds": timings.get("install"),
        }
    return found


COMPARED = ("state", "status", "verdict", "score", "findings")


def compare(embedded: dict[str, dict[str, Any]], celery: dict[str, dict[str, Any]]) -> dict[str, Any]:
    """Target by target: which of COMPARED differ between the modes (a target one mode lacks is a difference)."""
    differences = {}
    for target in sorted(set(embedded) | set(celery)):
        one, other = embedded.get(target), celery.get(target)
        if one is None or other is None:
            differences[target] = ["missing in " + ("embedded" if one is None else "celery")]
            continue
        differing = [key for key in COMPARED if one[key] != other[key]]
        if differing:
            differences[target] = differing
    return {"compared": list(COMPARED), "targets": len(set(embedded) | set(celery)), "differences": differences,
            "identical_verdicts": all("verdict" not in d and not d[0].startswith("missing")
                                      for d in differences.values())}


def run_both(servers: Sequence[Server], work: Path, workers_count: int = WORKERS) -> dict[str, Any]:
    """The batch embedded (default --jobs), then through Celery with `workers_count` local workers."""
    targets = write_targets(servers, work / "targets.txt")
    embedded = run_batch(targets, work / "embedded")
    with redis_server(work / "redis") as url, workers(url, work / "worker-logs", count=workers_count):
        celery = run_batch(targets, work / "celery", "--broker", url, "--jobs", str(2 * workers_count))
    modes = {"embedded": {**embedded, "targets": results(work / "embedded")},
             "celery": {**celery, "workers": workers_count, "targets": results(work / "celery")}}
    return {"modes": modes, "comparison": compare(modes["embedded"]["targets"], modes["celery"]["targets"])}


def record(servers: Sequence[Server], work: Path) -> dict[str, Any]:
    began = datetime.datetime.now(datetime.timezone.utc)
    at_start = machine()
    both = run_both(servers, work)
    return {"schema": SCHEMA, "script": "scripts/batch_corpus.py", "date": began.isoformat(timespec="seconds"),
            "machine": {**at_start, "load_at_end": [round(x, 2) for x in os.getloadavg()]},
            "servers": {s.name: s.line for s in servers}, **both}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--only", action="append", default=[], metavar="SERVER",
                        help="only this server (repeat); names: " + ", ".join(s.name for s in SERVERS))
    parser.add_argument("--record", type=Path, default=RECORDING, help=f"the recording (default: {RECORDING})")
    parser.add_argument("--work", type=Path, default=None, help="keep the batch directories here")
    args = parser.parse_args(argv)
    unknown = set(args.only) - {s.name for s in SERVERS}
    if unknown:
        parser.error(f"unknown server {sorted(unknown)}")
    servers = [s for s in SERVERS if not args.only or s.name in args.only]
    with tempfile.TemporaryDirectory(prefix="batch-corpus-") as tmp:
        work = args.work or Path(tmp)
        work.mkdir(parents=True, exist_ok=True)
        result = record(servers, work)
    args.record.parent.mkdir(parents=True, exist_ok=True)
    args.record.write_text(json.dumps(result, indent=2, ensure_ascii=False) + "\n", encoding="utf-8")
    comparison = result["comparison"]
    print(f"{comparison['targets']} targets; embedded {result['modes']['embedded']['wall_seconds']} s, celery "
          f"{result['modes']['celery']['wall_seconds']} s; differences: {comparison['differences'] or 'none'}",
          file=sys.stderr)
    return 0 if not comparison["differences"] else 1


if __name__ == "__main__":
    sys.exit(main())
