#!/usr/bin/env python3
"""Capture the rule corpus (tests/fixtures/corpus/) from live servers run in the mcp-sandbox sandbox.

For each server below this runs `mcp-sandbox scan TARGET --json REPORT --fail-on never -q ...`, takes the served
`tools`, `prompts`, `instructions` and `serverInfo` from the JSON report, and writes

    tests/fixtures/corpus/<server>.json        a saved tools/list document, readable by `mcp-sandbox check`
    tests/fixtures/corpus/<server>.source.md   the exact package version, its integrity pin, and the command

Needs a container engine and the npm/PyPI registries (nothing else: the servers run with no network).

    .venv/bin/python scripts/capture_corpus.py                 # re-capture the pinned versions (reproduce)
    .venv/bin/python scripts/capture_corpus.py --latest        # refresh to the newest releases
    .venv/bin/python scripts/capture_corpus.py --only mcp-server-time --out /tmp/corpus
    .venv/bin/python scripts/capture_corpus.py --from-reports DIR  # from the full reports scan_corpus.py kept

After a refresh, re-review tests/test_rules_corpus.py: every finding there is a reviewed true/false positive.
"""

from __future__ import annotations

import argparse
import datetime
import json
import shlex
import subprocess
import sys
import tempfile
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
CORPUS = ROOT / "tests" / "fixtures" / "corpus"
STRING_CAP = 16_384  # sandbox.core.untrusted.MAX_STRING_CHARS: a string this long in the report may have been cut


@dataclass(frozen=True)
class Server:
    fixture: str
    ecosystem: str  # npm | pypi
    package: str
    version: str  # pinned; --latest drops it
    args: list[str] = field(default_factory=list)
    env: dict[str, str] = field(default_factory=dict)
    command: str | None = None
    notes: str = ""

    def target(self, version: str | None) -> str:
        """The scan TARGET, pinned to `version` (None: the newest release)."""
        if not version:
            return f"{self.ecosystem}:{self.package}"
        return f"npm:{self.package}@{version}" if self.ecosystem == "npm" else f"pypi:{self.package}=={version}"


SERVERS = [
    Server("server-filesystem", "npm", "@modelcontextprotocol/server-filesystem", "2026.8.31", args=["/workspace"],
           notes="The allowed-directory argument is required; /workspace is the sandbox's empty scratch tmpfs."),
    Server("server-everything", "npm", "@modelcontextprotocol/server-everything", "2026.8.31", args=["stdio"],
           notes="Tools that need a client capability (get-roots-list, trigger-elicitation-request, "
                 "trigger-url-elicitation, trigger-sampling-request and their -async forms) are registered only when "
                 "the client declares roots/sampling/elicitation; the scanner's client declares none, so they are not "
                 "in this tools/list (simulate-research-query, from the same group, is)."),
    Server("server-memory", "npm", "@modelcontextprotocol/server-memory", "2026.8.31",
           env={"MEMORY_FILE_PATH": "/home/mcp/memory.json"},
           notes="MEMORY_FILE_PATH points into the writable home tmpfs (the root filesystem is read-only); it does "
                 "not change the tools."),
    Server("mcp-server-git", "pypi", "mcp-server-git", "2026.10.19",
           notes="Run without --repository: the tools are registered unconditionally and the option only confines "
                 "repo_path at call time (it also needs an existing repository at startup, which the empty "
                 "/workspace is not), so tools/list is the same either way."),
    Server("mcp-server-time", "pypi", "mcp-server-time", "2026.10.19"),
    Server("server-sequential-thinking", "npm", "@modelcontextprotocol/server-sequential-thinking", "2026.8.31"),
    Server("desktop-commander", "npm", "@wonderwhy-er/desktop-commander", "0.2.52",
           notes="The tools/list of a server started with no arguments, on its default config."),
    Server("mcp-server-fetch", "pypi", "mcp-server-fetch", "2026.10.24"),
    Server("markitdown-mcp", "pypi", "markitdown-mcp", "0.0.1a8",
           notes="Only pre-releases exist (0.0.1a8 was the newest), so the target pins the version."),
    Server("duckduckgo-mcp-server", "pypi", "duckduckgo-mcp-server", "0.7.0"),
]


def scan_command(server: Server, target: str, report: Path) -> list[str]:
    command = ["mcp-sandbox", "scan", target, "--json", str(report), "--fail-on", "never", "-q"]
    for name, value in server.env.items():
        command += ["--env", f"{name}={value}"]
    if server.command:
        command += ["--command", server.command]
    if server.args:
        command += ["--", *server.args]
    return command


def _long_strings(value: Any, found: list[str], where: str = "") -> None:
    if isinstance(value, str) and len(value) >= STRING_CAP:
        found.append(where or "(top)")
    elif isinstance(value, dict):
        for key, item in value.items():
            _long_strings(item, found, f"{where}.{key}")
    elif isinstance(value, list):
        for index, item in enumerate(value):
            _long_strings(item, found, f"{where}[{index}]")


def tools_document(report: dict[str, Any]) -> dict[str, Any]:
    server = report.get("server") or {}
    document: dict[str, Any] = {"serverInfo": {k: server[k] for k in ("name", "version") if server.get(k)}}
    if server.get("protocol_version"):
        document["protocolVersion"] = server["protocol_version"]
    if server.get("instructions"):
        document["instructions"] = server["instructions"]
    if report.get("prompts"):
        document["prompts"] = report["prompts"]
    document["tools"] = report["tools"]
    return document


def source_markdown(server: Server, report: dict[str, Any], command: list[str], date: str) -> str:
    version = report["target"].get("version") or "?"
    pins: dict[str, Any] = {}
    for package in (report.get("provenance") or {}).get("packages") or []:
        if package.get("name") == server.package:
            pins = package.get("pins") or {}
    pin = pins.get("integrity") or ", ".join(f"sha256:{d} ({f})" for f, d in (pins.get("sha256") or {}).items())
    info = report.get("server") or {}
    lines = [
        f"# {server.fixture}.json",
        "",
        f"- Package: {server.ecosystem} `{server.package}` **{version}**" + (f" (`{pin}`)" if pin else ""),
        f"- Server: `{info.get('name')}` {info.get('version')}, protocol {info.get('protocol_version')}",
        (f"- Captured: {date}, live, by `scripts/capture_corpus.py` with mcp-sandbox "
         f"{(report.get('scanner') or {}).get('version')}"),
        f"- Launch inside the sandbox: `{shlex.join((report.get('install') or {}).get('command') or [])}`",
        (f"- Served: {len(report['tools'])} tools, {len(report.get('prompts') or [])} prompts, "
         f"{'with' if info.get('instructions') else 'no'} instructions"),
        "",
        "Command:",
        "",
        "```sh",
        shlex.join(command),
        "```",
        "",
        "The fixture is the report's `tools`, `prompts`, `server.instructions` and `server` name/version, as served.",
    ]
    if server.notes:
        lines += ["", server.notes]
    return "\n".join(lines) + "\n"


def scan_report(server: Server, latest: bool) -> dict[str, Any]:
    """Scan the server live and return its JSON report."""
    target = server.target(None if latest else server.version)
    with tempfile.TemporaryDirectory(prefix="corpus-") as tmp:
        report_path = Path(tmp) / "report.json"
        command = scan_command(server, target, report_path)
        print(f"[{server.fixture}] {shlex.join(command)}", file=sys.stderr)
        done = subprocess.run([sys.executable, "-m", "scanner", *command[1:]], cwd=ROOT, check=False)
        if done.returncode != 0 or not report_path.is_file():
            raise SystemExit(f"[{server.fixture}] scan exited {done.returncode}; nothing written")
        return json.loads(report_path.read_text(encoding="utf-8"))


def saved_report(server: Server, reports: Path) -> dict[str, Any]:
    """A full report scripts/scan_corpus.py kept (`--reports DIR`), if it was scanned with this fixture's command."""
    path = reports / f"{server.fixture}.json"
    if not path.is_file():
        raise SystemExit(f"[{server.fixture}] no saved report {path}")
    report = json.loads(path.read_text(encoding="utf-8"))
    if report.get("target", {}).get("requested") != server.target(server.version):
        raise SystemExit(f"[{server.fixture}] {path} scanned {report.get('target', {}).get('requested')}, "
                         f"not {server.target(server.version)}")
    return report


def capture(server: Server, out: Path, report: dict[str, Any], date: str) -> None:
    if report.get("errors") or not report.get("tools"):
        raise SystemExit(f"[{server.fixture}] the scan did not list tools: {report.get('errors')}")
    document = tools_document(report)
    cut: list[str] = []
    _long_strings(document, cut)
    if cut:
        raise SystemExit(f"[{server.fixture}] strings may be capped in the report: {', '.join(cut)}")
    version = report["target"].get("version")
    recorded = scan_command(server, server.target(version), Path("REPORT.json"))  # pinned to what was captured
    out.mkdir(parents=True, exist_ok=True)
    (out / f"{server.fixture}.json").write_text(json.dumps(document, indent=2, ensure_ascii=False) + "\n",
                                                encoding="utf-8")
    (out / f"{server.fixture}.source.md").write_text(source_markdown(server, report, recorded, date),
                                                     encoding="utf-8")
    print(f"[{server.fixture}] {server.package} {version}: {len(document['tools'])} tools -> {out}", file=sys.stderr)


def selected(servers: list[Server], only: list[str], parser: argparse.ArgumentParser) -> list[Server]:
    """The servers `--only` names (all when none); an unknown name is a usage error."""
    unknown = set(only) - {s.fixture for s in servers}
    if unknown:
        parser.error(f"unknown server(s): {', '.join(sorted(unknown))}")
    return [s for s in servers if not only or s.fixture in only]


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--latest", action="store_true", help="capture the newest release, not the pinned version")
    parser.add_argument("--only", action="append", default=[], metavar="FIXTURE",
                        help="capture only this fixture (repeat); names: " + ", ".join(s.fixture for s in SERVERS))
    parser.add_argument("--out", type=Path, default=CORPUS, help=f"output folder (default: {CORPUS})")
    parser.add_argument("--date", default=datetime.date.today().isoformat(), help="capture date for the notes")
    parser.add_argument("--from-reports", type=Path, default=None, metavar="DIR",
                        help="take each report from DIR/<fixture>.json (scripts/scan_corpus.py --reports DIR) "
                             "instead of scanning; only for fixtures launched with the same arguments")
    args = parser.parse_args(argv)
    for server in selected(SERVERS, args.only, parser):
        report = saved_report(server, args.from_reports) if args.from_reports else scan_report(server, args.latest)
        capture(server, args.out, report, args.date)
    return 0


if __name__ == "__main__":
    sys.exit(main())
