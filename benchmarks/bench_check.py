"""`mcp-sandbox check` of a generated tool list, whole processes, paired in one run: the baseline ref's code against
the current code, for the terminal view (on stdout, to a file) and for `--json FILE -q`; medians of N rotating runs,
wall time, CPU time (user + system: on a loaded machine the wall time waits for a core, the CPU time much less) and
peak resident memory, and whether both wrote the same bytes.

    .venv/bin/python benchmarks/bench_check.py [--tools 3000] [--runs 5] [--baseline aa7ca09]

Goal (issue 12): 3,000 tools (about 1.5 MB) under 1.0 s wall and under 100 MiB peak, terminal and --json alike;
50,000 tools near-linear (`--tools 50000 --runs 1`).
"""

from __future__ import annotations

import argparse
import json
import os
import random
import resource
import statistics
import sys
import tempfile
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))

from paired import CLI, Sample, Side, describe_ref, export_ref, row, run  # noqa: E402

BASELINE_REF = "aa7ca09"  # the commit before the check work (issue 12)

VERBS = ["get", "list", "create", "update", "delete", "search", "send", "run", "fetch", "write"]
NOUNS = ["user", "order", "invoice", "ticket", "file", "repo", "issue", "comment", "event", "report", "page", "task",
         "project", "label", "team", "message", "channel", "note", "contact", "deal"]
WORDS = ("the a record item value from into with for by and of one each all current given named matching stored "
         "remote local returns fields json list details status owner date time text body title id").split()


def generate_tools(count: int, seed: int = 7) -> list[dict[str, Any]]:
    """A realistic-looking, varied tool list (deterministic for a seed)."""
    rng = random.Random(seed)
    tools = []
    for i in range(count):
        verb, noun = rng.choice(VERBS), rng.choice(NOUNS)
        description = " ".join(rng.choice(WORDS) for _ in range(rng.randint(4, 40)))
        props = {f"{rng.choice(NOUNS)}_{rng.choice(['id', 'name', 'limit', 'query', 'path'])}":
                 {"type": rng.choice(["string", "integer"]), "description": " ".join(rng.sample(WORDS, 6))}
                 for _ in range(rng.randint(0, 5))}
        tools.append({"name": f"svc_{verb}_{noun}_{i}", "description": description,
                      "inputSchema": {"type": "object", "properties": props, "required": list(props)[:1]},
                      "annotations": {"readOnlyHint": verb in ("get", "list", "search", "fetch")}})
    return tools


MODES = {"terminal": ["check", "tools.json", "--fail-on", "never"],
         "--json": ["check", "tools.json", "--json", "out.json", "-q", "--fail-on", "never"]}


def cpu_seconds() -> float:
    """User + system CPU time of this process's waited-for children so far."""
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


def alternate_cpu(sides: list[Side], runs: int, cwd: Path) -> tuple[list[list[Sample]], list[float]]:
    """As paired.alternate (one warm-up each, then `runs` rotating runs), with each side's median CPU seconds."""
    for side in sides:
        run(side, cwd)
    samples: list[list[Sample]] = [[] for _ in sides]
    spent: list[list[float]] = [[] for _ in sides]
    for index in range(runs):
        for step in range(len(sides)):
            which = (index + step) % len(sides)
            before = cpu_seconds()
            samples[which].append(run(sides[which], cwd))
            spent[which].append(cpu_seconds() - before)
    return samples, [statistics.median(times) for times in spent]


def same_output(baseline: Side, current: Side, mode: str, work: Path) -> bool:
    """One more run of each, keeping what it wrote: the terminal view (stdout) or the JSON file."""
    written = []
    for side in (baseline, current):
        run(side, work, stdout=work / "stdout.txt")
        written.append((work / ("stdout.txt" if mode == "terminal" else "out.json")).read_bytes())
    return written[0] == written[1]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--tools", type=int, default=3000)
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--baseline", default=BASELINE_REF, help="git ref whose code is the before figure")
    args = parser.parse_args()
    # Bytecode as an installed CLI has it: with PYTHONDONTWRITEBYTECODE set, every run (both sides) would compile
    # its modules from source again (~0.1 s), which no user pays after the first run.
    os.environ.pop("PYTHONDONTWRITEBYTECODE", None)
    with tempfile.TemporaryDirectory() as tmp:
        work = Path(tmp)
        (work / "tools.json").write_text(json.dumps({"tools": generate_tools(args.tools)}), encoding="utf-8")
        tree = export_ref(args.baseline, work / "baseline")
        size = (work / "tools.json").stat().st_size
        print(f"check of {args.tools} tools ({size / 2**20:.1f} MiB), medians of {args.runs} rotating runs; "
              f"baseline {describe_ref(args.baseline)}")
        for mode, argv in MODES.items():
            sides = [Side(f"{mode} (baseline)", [*CLI, *argv], tree), Side(mode, [*CLI, *argv])]
            (before, after), (cpu_before, cpu_after) = alternate_cpu(sides, args.runs, work)
            identical = same_output(sides[0], sides[1], mode, work)
            print(row(f"{mode}", before, after, memory=True) + f"  cpu {cpu_before:.3f} -> {cpu_after:.3f} s"
                  f"  same bytes: {'yes' if identical else 'NO'}")


if __name__ == "__main__":
    main()
