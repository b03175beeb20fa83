#!/usr/bin/env python3
"""Scan the ten real servers of the scan corpus (tests/fixtures/scans/) as a user would: full scans, probes on.

For each server below this runs `mcp-sandbox scan TARGET --json REPORT --fail-on never -q [-- ARGS]`, one at a
time, and writes a compact summary of the report to tests/fixtures/scans/<server>.json: the package and version,
the verdict, status and score, the skipped stages, the scan's wall time, and every finding as rule, severity, tool
and a short message. tests/test_scan_corpus.py holds the review of every recorded finding (true or false positive,
with the reasoning) and checks the recordings against it.

Needs a container engine and the npm/PyPI registries (the servers themselves run with no route off the host).
Scans are heavy: run this on a quiet machine; it never runs two at once.

    .venv/bin/python scripts/scan_corpus.py                        # every server, pinned versions
    .venv/bin/python scripts/scan_corpus.py --only mcp-server-time --out /tmp/scans
    .venv/bin/python scripts/scan_corpus.py --reports /tmp/full    # also keep the full JSON reports

After a re-run, re-review tests/test_scan_corpus.py: a changed recording is a changed server or a changed scanner.
"""

from __future__ import annotations

import argparse
import json
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))
from capture_corpus import Server, scan_command, selected  # noqa: E402  (a sibling script, not a package)

ROOT = Path(__file__).resolve().parent.parent
SCANS = ROOT / "tests" / "fixtures" / "scans"
MESSAGE_CHARS = 160
SCAN_TIMEOUT = 3600

SERVERS = [
    Server("server-filesystem", "npm", "@modelcontextprotocol/server-filesystem", "2026.8.31", args=["/workspace"],
           notes="The allowed directory is the sandbox workspace, which holds the probe seed."),
    Server("server-everything", "npm", "@modelcontextprotocol/server-everything", "2026.8.31", args=["stdio"]),
    Server("server-memory", "npm", "@modelcontextprotocol/server-memory", "2026.8.31",
           env={"MEMORY_FILE_PATH": "/home/mcp/memory.json"},
           notes="MEMORY_FILE_PATH points into the writable home tmpfs (the root filesystem is read-only)."),
    Server("server-sequential-thinking", "npm", "@modelcontextprotocol/server-sequential-thinking", "2026.8.31"),
    Server("desktop-commander", "npm", "@wonderwhy-er/desktop-commander", "0.2.52"),
    Server("mcp-server-git", "pypi", "mcp-server-git", "2026.10.19",
           args=["--repository", "/workspace/projects/demo-repo"],
           notes="Confined to the git repository of the probe seed, as a user points it at their repository."),
    Server("mcp-server-time", "pypi", "mcp-server-time", "2026.10.19"),
    Server("mcp-server-fetch", "pypi", "mcp-server-fetch", "2026.10.24"),
    Server("markitdown-mcp", "pypi", "markitdown-mcp", "0.0.1a8"),
    Server("duckduckgo-mcp-server", "pypi", "duckduckgo-mcp-server", "0.7.0"),
]


def _short(text: str) -> str:
    line = " ".join(text.split())
    return line if len(line) <= MESSAGE_CHARS else line[:MESSAGE_CHARS - 1] + "…"


def summary(server: Server, report: dict[str, Any], seconds: float, command: list[str]) -> dict[str, Any]:
    """The compact recording of one scan: what the review in tests/test_scan_corpus.py is about."""
    findings = [{"rule": f["rule_id"], "severity": f["severity"], "tool": f.get("tool"),
                 "message": _short(f.get("message") or "")} for f in report.get("findings") or []]
    findings.sort(key=lambda f: (f["rule"], str(f["tool"]), f["severity"], f["message"]))
    score = report.get("score") or {}
    target = report.get("target") or {}
    return {
        "server": server.fixture,
        "package": f"{server.ecosystem}:{server.package}",
        "version": target.get("version"),
        "command": command,
        "verdict": report.get("verdict"),
        "status": report.get("status"),
        "skipped": [f"{s['stage']}: {_short(s['reason'])}" for s in report.get("skipped") or []],
        "errors": [_short(e) for e in report.get("errors") or []],
        "score": score.get("value"),
        "tools": len(report.get("tools") or []),
        "probes": len(report.get("probes") or []),
        "wall_seconds": round(seconds, 1),
        "findings": findings,
    }


def scan(server: Server, out: Path, reports: Path | None) -> dict[str, Any]:
    target = server.target(server.version)
    with tempfile.TemporaryDirectory(prefix="scan-corpus-") as tmp:
        report_path = Path(tmp) / "report.json"
        command = scan_command(server, target, report_path)
        print(f"[{server.fixture}] {' '.join(command)}", file=sys.stderr, flush=True)
        started = time.monotonic()
        done = subprocess.run([sys.executable, "-m", "scanner", *command[1:]], cwd=ROOT, check=False,
                              timeout=SCAN_TIMEOUT)
        seconds = time.monotonic() - started
        if not report_path.is_file():
            raise SystemExit(f"[{server.fixture}] scan exited {done.returncode} and wrote no report")
        report = json.loads(report_path.read_text(encoding="utf-8"))
        if reports is not None:
            reports.mkdir(parents=True, exist_ok=True)
            shutil.copyfile(report_path, reports / f"{server.fixture}.json")
    recorded = scan_command(server, target, Path("REPORT.json"))
    result = summary(server, report, seconds, recorded)
    out.mkdir(parents=True, exist_ok=True)
    (out / f"{server.fixture}.json").write_text(json.dumps(result, indent=2, ensure_ascii=False) + "\n",
                                                encoding="utf-8")
    print(f"[{server.fixture}] {result['verdict']} ({result['status']}), {len(result['findings'])} findings, "
          f"{result['wall_seconds']} s", file=sys.stderr, flush=True)
    return result


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--only", action="append", default=[], metavar="SERVER",
                        help="scan only this server (repeat); names: " + ", ".join(s.fixture for s in SERVERS))
    parser.add_argument("--out", type=Path, default=SCANS, help=f"output folder (default: {SCANS})")
    parser.add_argument("--reports", type=Path, default=None, help="also keep each full JSON report in this folder")
    args = parser.parse_args(argv)
    for server in selected(SERVERS, args.only, parser):
        scan(server, args.out, args.reports)
    return 0


if __name__ == "__main__":
    sys.exit(main())
