"""Where a warm scan's wall time goes: each phase's start and end, from the process's start, per thread.

    .venv/bin/python benchmarks/bench_timeline.py [--runs 5] [--only listing|probes] [--p10-off]

The report's `timings` give each phase's length; with phases running in threads beside each other, lengths do not
say which of them the scan waited for. This runs the same whole-process scans as bench_scan.py (a cached install,
`-q --json FILE`, bytecode written as a user's install writes it) in a child process that records, through the scan's
own PhaseClock, when each phase began and ended and in which thread, and prints the median start and end of each
phase over the runs, in order of start. The scanner's code is not changed: the child wraps PhaseClock.add (where
every phase's seconds arrive) before the CLI is imported, and the parent times the process from before it starts
to its exit.

Reading it: the phases from `engine_connect` to `container_start` are the head start (scanner/pipeline/head_start.py)
while the main thread imports the scan path; `flags_read` is the moment the CLI had read the flags and handed the head
start the scan's options, before which neither the resolution nor the server's start can begin; `first_answer` ends when the server answered the handshake (its length
counts from the server's start); `relisting` is entered twice (the second server's start in the head start, its
listing in the scan's pool); the gap between `teardown`'s end and `exit` is the report's writing and the interpreter's
exit. Whatever ends last before `server_end` begins is what the listing waited for.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from collections import defaultdict
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent


# ---- the child: the CLI with its PhaseClock recording --------------------------------------------------------------

def child(out: Path, argv: list[str]) -> None:
    """Run the CLI with `argv`; every phase's (name, start, end, thread), recorded as it ends, written to `out`."""
    sys.path.insert(0, str(ROOT))
    from scanner.pipeline import phase_clock

    lock = threading.Lock()
    records: list[dict[str, Any]] = []
    original_add = phase_clock.PhaseClock.add

    def add(self: Any, name: str, seconds: float) -> None:  # every phase ends here (phase() and timed() call add)
        ended = time.monotonic()
        with lock:
            start = _counted_from(name, records, ended - seconds)
            records.append({"name": name, "start": start, "end": start + seconds,
                            "thread": threading.current_thread().name})
        original_add(self, name, seconds)

    phase_clock.PhaseClock.add = add  # type: ignore[method-assign]
    _mark_flags_read(records, lock)
    sys.argv = ["mcp-sandbox", *argv]
    from scanner.cli.entry import main  # the console script's: it may begin the sink before the CLI is imported

    try:
        main()
    finally:
        out.write_text(json.dumps(records), encoding="utf-8")


def _mark_flags_read(records: list[dict[str, Any]], lock: threading.Lock) -> None:
    """Record `flags_read`, a moment rather than a phase: when the CLI, its flags read, hands the head start the
    scan's options (`HeadStart.begin`), after which the resolution and the server's start can begin."""
    from scanner.pipeline import head_start

    original_begin = head_start.HeadStart.begin

    def begin(self: Any, options: Any) -> None:
        now = time.monotonic()
        with lock:
            records.append({"name": "flags_read", "start": now, "end": now, "thread": threading.current_thread().name})
        original_begin(self, options)

    head_start.HeadStart.begin = begin  # type: ignore[method-assign]


def _counted_from(name: str, records: list[dict[str, Any]], otherwise: float) -> float:
    """Where a phase the listing adds after its session began: `first_answer` counts from the server's start (the
    first `container_start`'s end), `listing` from the first answer; the others end as they are added."""
    counted_from = {"first_answer": "container_start", "listing": "first_answer"}.get(name)
    if counted_from is None:
        return otherwise
    earlier = [record["end"] for record in records if record["name"] == counted_from]
    return earlier[0] if earlier else otherwise


# ---- the parent: runs and medians ----------------------------------------------------------------------------------

def one_run(argv: list[str], work: Path) -> list[dict[str, Any]]:
    """One scan process; its phases with offsets from the process's start, and `exit` for the process's end."""
    out = work / "phases.json"
    out.unlink(missing_ok=True)
    env = {key: value for key, value in os.environ.items() if key != "PYTHONDONTWRITEBYTECODE"}
    began = time.monotonic()
    done = subprocess.run([sys.executable, __file__, "--child", str(out), "--", *argv], env=env, cwd=ROOT,
                          stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, check=False)
    ended = time.monotonic()
    if not out.is_file():
        raise SystemExit(f"the scan wrote no phases (exit {done.returncode}): {done.stderr.decode()[-800:]}")
    records = json.loads(out.read_text(encoding="utf-8"))
    for record in records:
        record["start"] -= began
        record["end"] -= began
    return [*records, {"name": "exit", "start": ended - began, "end": ended - began, "thread": "-"}]


def occurrences(records: list[dict[str, Any]]) -> dict[str, dict[str, Any]]:
    """The records keyed by name, a phase entered again numbered (`sink_start#2`), in order of start."""
    seen: dict[str, int] = defaultdict(int)
    keyed: dict[str, dict[str, Any]] = {}
    for record in sorted(records, key=lambda r: r["start"]):
        seen[record["name"]] += 1
        count = seen[record["name"]]
        keyed[record["name"] if count == 1 else f"{record['name']}#{count}"] = record
    return keyed


def timeline(label: str, argv: list[str], runs: int, work: Path) -> None:
    """Print the median start and end of each phase over `runs` scans, in order of start."""
    one_run(argv, work)  # warm-up: installs (or reuses) the image, writes the bytecode
    per_run = [occurrences(one_run(argv, work)) for _ in range(runs)]
    names = {name for run in per_run for name in run}
    rows = []
    for name in names:
        found = [run[name] for run in per_run if name in run]
        threads = sorted({record["thread"] for record in found})
        rows.append((statistics.median(r["start"] for r in found), statistics.median(r["end"] for r in found),
                     name, len(found), threads[0] if len(threads) == 1 else f"{threads[0]} (+{len(threads) - 1})"))
    print(f"\n{label}: medians of {runs} runs, seconds from the process's start")
    print(f"  {'phase':20s} {'start':>6s} {'end':>6s} {'wall':>6s}  thread")
    for start, end, name, seen, thread in sorted(rows):
        present = "" if seen == runs else f"  (in {seen} of {runs} runs)"
        print(f"  {name:20s} {start:6.3f} {end:6.3f} {end - start:6.3f}  {thread}{present}")


def main() -> None:
    if len(sys.argv) > 2 and sys.argv[1] == "--child":
        child(Path(sys.argv[2]), sys.argv[4:])
        return
    # The parent's own imports (bench_scan's targets, beside this file on sys.path[0]): the child imports only the CLI.
    from bench_scan import LISTING_TARGET, PROBES_TARGET, p10_off_config

    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--only", choices=("listing", "probes"))
    parser.add_argument("--p10-off", action="store_true", help="also the listing scan with P10 disabled by --config")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="bench-timeline-") as folder:
        work = Path(folder)
        report = ["--json", str(work / "report.json"), "-q", "--fail-on", "never"]
        if args.only != "probes":
            listing = scan_words(LISTING_TARGET, "--no-probes", *report)
            timeline("listing (warm, --no-probes)", listing, args.runs, work)
            if args.p10_off:
                timeline("listing, P10 off", [*listing, "--config", str(p10_off_config(work))], args.runs, work)
        if args.only != "listing":
            timeline("probes (warm, full scan)", scan_words(PROBES_TARGET, *report), args.runs, work)


def scan_words(target: list[str], *flags: str) -> list[str]:
    """`scan NAME FLAGS... [-- SERVER ARGS]`, as bench_scan.py runs it."""
    name, *rest = target
    return ["scan", name, *flags, *rest]


if __name__ == "__main__":
    main()
