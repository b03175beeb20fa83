"""What a full probing scan of a very large server costs: the zoo's 3,000-tool server, warm, as a whole process.

    .venv/bin/python benchmarks/bench_big_server.py [--pairs 3] [--before DIR]

The server (`zoo-many-tools` of tests/servers/zoo, a local target) lists 3,000 tools in one message of 2.6 MB. A
full scan plans 500 calls (the call budget), re-lists the tools after every 30th call (scanner/probes/
relist_cadence.py) and lists them a second time under another client identity (P10), so it shows what the scan costs
per tool listed rather than per call: reading and comparing listings, planning, linting. A warm-up scan installs (or
reuses) the image first; no round pays for the install.

`--before DIR` times the scanner of another checkout (`git archive BASE scanner sandbox images | tar -x -C DIR`)
with this checkout's virtualenv in the same rounds, the order alternating, and prints the median of the per-round
differences with their quartiles. Each side also prints the median of its report's `timings` for the phases that
scale with the listing (probes, relisting, listing) and the scan process's own CPU.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import sys
import tempfile
from collections.abc import Callable
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(Path(__file__).resolve().parent))

from bench_scan import Spent, paired_change, rounds, scan_once  # noqa: E402 - the sibling benchmark, on the path above

TARGET = [str(ROOT / "tests" / "servers" / "zoo")]
COMMAND = ("--command", "zoo-many-tools")
SCALING_PHASES = ("listing", "probes", "relisting", "total")


def scan(source: Path, report: Path) -> Callable[[], Spent]:
    return lambda: scan_once(source, TARGET, True, report, COMMAND)


def phase_medians(reports: list[dict[str, object]]) -> str:
    shown = []
    for name in SCALING_PHASES:
        values = [float(t[name]) for t in (r.get("timings") or {} for r in reports)  # type: ignore[union-attr]
                  if isinstance(t, dict) and isinstance(t.get(name), (int, float))]
        if values:
            shown.append(f"{name} {statistics.median(values):.2f}")
    return ", ".join(shown) or "(no phase table)"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--pairs", type=int, default=3, help="rounds (default 3)")
    parser.add_argument("--before", type=Path, help="another checkout's tree, timed in the same rounds")
    args = parser.parse_args()
    if args.pairs < 1:
        raise SystemExit("--pairs must be at least 1")
    # Bytecode as an installed CLI has it: with PYTHONDONTWRITEBYTECODE set, a --before tree would compile every run.
    os.environ.pop("PYTHONDONTWRITEBYTECODE", None)
    sources = {"scan": ROOT, **({"before": args.before.resolve()} if args.before else {})}
    with tempfile.TemporaryDirectory(prefix="mcp-sandbox-bench-big-") as temp:
        work = Path(temp)
        scan(ROOT, work / "warm-up.json")()
        warm = json.loads((work / "warm-up.json").read_text())
        print(f"big server: {len(warm.get('tools') or [])} tools, {len(warm.get('probes') or [])} probe results; "
              f"warm-up {phase_medians([warm])}", flush=True)
        reports: dict[str, list[dict[str, object]]] = {label: [] for label in sources}

        def kept(label: str, source: Path) -> Callable[[], Spent]:
            def run() -> Spent:
                report = work / f"{label}.json"
                spent = scan(source, report)()
                reports[label].append(json.loads(report.read_text()))
                return spent
            return run

        samples = rounds(args.pairs, {label: kept(label, source) for label, source in sources.items()})
    for label, values in samples.items():
        seconds = statistics.median(sample.spent.seconds for sample in values)
        own = [sample.spent.own_cpu for sample in values if sample.spent.own_cpu is not None]
        cpu = f", scan process CPU {statistics.median(own):.2f} s" if own else ""
        print(f"big server: {label} {seconds:.2f} s (median of {args.pairs}){cpu}; {phase_medians(reports[label])}",
              flush=True)
    if "before" in samples and args.pairs >= 2:
        change = paired_change([s.spent.seconds for s in samples["scan"]], [s.spent.seconds for s in samples["before"]])
        print(f"big server: scan minus before, per round: {change}", flush=True)


if __name__ == "__main__":
    main()
