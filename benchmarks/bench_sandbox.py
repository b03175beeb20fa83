"""Benchmark the sandbox spine: cold install, warm scan, start -> first tools/list, teardown.

Run on demand (`make bench`), not in the test suite. Prints medians over several runs and a JSON line for records.
    python benchmarks/bench_sandbox.py [--target pypi:mcp-server-time] [--cold 3] [--warm 5]
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from scanner.pipeline.scan import ScanOptions, run_scan


def measure(target: str, server_args: list[str], runs: int, use_cache: bool) -> list[dict[str, float]]:
    samples = []
    for _ in range(runs):
        report = run_scan(ScanOptions(target=target, server_args=server_args, use_cache=use_cache))
        if report.errors or not report.tools:
            raise SystemExit(f"scan of {target} failed: {report.errors}")
        samples.append({
            "install": report.timings.install or 0.0,
            "start": report.timings.start or 0.0,
            "first_tools_list": report.timings.first_tools_list or 0.0,
            "teardown": report.sandbox.teardown.seconds if report.sandbox and report.sandbox.teardown else 0.0,
            "total": report.timings.total or 0.0,
        })
    return samples


def medians(samples: list[dict[str, float]]) -> dict[str, float]:
    return {key: round(statistics.median(s[key] for s in samples), 3) for key in samples[0]}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--target", default="pypi:mcp-server-time")
    parser.add_argument("--server-arg", action="append", default=[])
    parser.add_argument("--cold", type=int, default=3, help="runs with --no-cache (fresh install)")
    parser.add_argument("--warm", type=int, default=5, help="runs reusing the installed image")
    args = parser.parse_args()
    cold = medians(measure(args.target, args.server_arg, args.cold, use_cache=False))
    warm = medians(measure(args.target, args.server_arg, args.warm, use_cache=True))
    print(f"target {args.target}: medians in seconds (cold n={args.cold}, warm n={args.warm})")
    print(f"  cold scan total {cold['total']:.2f}  (install {cold['install']:.2f})")
    print(f"  warm scan total {warm['total']:.2f}")
    print(f"  start (create+attach+start) {warm['start']:.2f}")
    print(f"  start -> first tools/list {warm['first_tools_list']:.2f}")
    print(f"  teardown {warm['teardown']:.2f}")
    print(json.dumps({"target": args.target, "cold": cold, "warm": warm}))


if __name__ == "__main__":
    main()
