"""Time I8/I9 package checks the way check-config runs them: shipped lists loaded once vs read per package.

    .venv/bin/python benchmarks/bench_config_lint.py [--packages 5000] [--repeat 5]

Pairs, in one run, the current path (package_findings: lists read once, indexed, answers memoised) with a baseline
that passes freshly read lists on every call (what every package cost before), and prints medians.
"""

from __future__ import annotations

import argparse
import statistics
import time
from collections.abc import Callable
from importlib import resources
from pathlib import Path

from scanner.provenance.known_bad import known_bad_finding, load_known_bad
from scanner.provenance.launch import package_findings
from scanner.provenance.typosquat import load_well_known, typosquat_finding

NAMES = ["@modelcontextprotocol/server-filesystem", "mcp-server-fetch", "postmark-mcp", "server-githbu", "some-pkg"]


def _baseline(name: str) -> None:
    data = Path(str(resources.files("scanner.data")))
    known_bad_finding("npm", name, "", load_known_bad(data / "known_bad.json"))
    typosquat_finding("npm", name, load_well_known(data / "well_known_servers.json"))


def _current(name: str) -> None:
    package_findings("npm", name, "")


def _median(run: Callable[[str], None], count: int, repeat: int) -> float:
    times = []
    for _ in range(repeat):
        start = time.perf_counter()
        for i in range(count):
            run(NAMES[i % len(NAMES)] + ("" if i % 3 else str(i)))
        times.append(time.perf_counter() - start)
    return statistics.median(times)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--packages", type=int, default=5000)
    parser.add_argument("--repeat", type=int, default=5)
    args = parser.parse_args()
    base = _median(_baseline, args.packages, args.repeat)
    now = _median(_current, args.packages, args.repeat)
    print(f"packages={args.packages} baseline_median={base:.3f}s current_median={now:.3f}s speedup={base / now:.1f}x")


if __name__ == "__main__":
    main()
