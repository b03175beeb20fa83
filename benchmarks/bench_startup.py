"""CLI start-up, paired in one run: bare `python -c pass`, the baseline ref's CLI and the current CLI, for
`--version`, `--help` and `check` of a 3-tool file; medians of N rotating runs (whole processes, wall time).

    .venv/bin/python benchmarks/bench_startup.py [--runs 15] [--baseline aa7ca09]

Goals (issue 12): `--version` and `--help` under 0.25 s, `check` of a small file under 0.35 s.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from paired import CLI, Side, alternate, describe_ref, export_ref, median_cpu, median_seconds  # noqa: E402

BASELINE_REF = "aa7ca09"  # the commit before the start-up work (issue 12)
SMALL = {"tools": [{"name": "get_weather", "description": "Get the current weather for a city, in metric units, "
                    "with the temperature, wind and a short summary of the sky.",
                    "inputSchema": {"type": "object", "properties": {"city": {"type": "string",
                                                                               "description": "City name."}},
                                    "required": ["city"]}},
                   {"name": "list_cities", "description": "List the cities the service knows."},
                   {"name": "x", "description": "Does stuff."}]}
COMMANDS = {"--version": ["--version"], "--help": ["--help"], "check small": ["check", "small.json", "--fail-on",
                                                                              "never"]}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=15)
    parser.add_argument("--baseline", default=BASELINE_REF, help="git ref whose CLI is the before figure")
    args = parser.parse_args()
    # Bytecode as an installed CLI has it: with PYTHONDONTWRITEBYTECODE set, every run (both sides) would compile
    # its modules from source again (~0.1 s), which no user pays after the first run.
    os.environ.pop("PYTHONDONTWRITEBYTECODE", None)
    with tempfile.TemporaryDirectory() as tmp:
        work = Path(tmp)
        (work / "small.json").write_text(json.dumps(SMALL), encoding="utf-8")
        tree = export_ref(args.baseline, work / "baseline")
        bare = Side("python -c pass", ["-c", "pass"])
        print(f"start-up, medians of {args.runs} rotating runs; baseline {describe_ref(args.baseline)}")
        figures = {}
        for label, argv in COMMANDS.items():
            sides = [bare, Side(f"{label} (baseline)", [*CLI, *argv], tree), Side(label, [*CLI, *argv])]
            samples = alternate(sides, args.runs, work)
            python, before, after = (median_seconds(s) for s in samples)
            cpu_before, cpu_after = (median_cpu(s) for s in samples[1:])
            figures[label] = {"python": python, "baseline": before, "current": after, "baseline_cpu": cpu_before,
                              "current_cpu": cpu_after}
            print(f"{label:<12} python -c pass {python:.3f} s  baseline {before:.3f} s  current {after:.3f} s  "
                  f"current/baseline {after / before:.2f}x  current/python {after / python:.1f}x  "
                  f"(CPU {cpu_before:.3f} -> {cpu_after:.3f} s)")
        print(json.dumps({"startup": {k: {n: round(v, 3) for n, v in f.items()} for k, f in figures.items()}}))


if __name__ == "__main__":
    main()
