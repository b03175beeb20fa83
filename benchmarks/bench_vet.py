"""Time `mcp-sandbox vet` (the offline source scan), optionally paired with mcp-vet on the same tree in the same run.

    .venv/bin/python benchmarks/bench_vet.py PATH [PATH…] [--repeat 5] [--mcp-vet BIN] [--timeout 600]

For each PATH (a source folder or an unpacked npm package; built output included, as `scan` reads a package):
the median wall time of `vet_tree` in this process (parsers warm after the first run, like a scan), the median of
the whole `mcp-sandbox vet` command (process start, imports, tree-sitter load), files and findings; with --mcp-vet,
the same tree through `mcp-vet PATH --json --no-files` (killed at --timeout, reported as "> timeout"). mcp-vet skips
every dist/ and build/ folder below the path it is given, so to compare on built output pass the dist folder itself.
"""

from __future__ import annotations

import argparse
import statistics
import subprocess
import sys
import time
from pathlib import Path

from scanner.vet import VetOptions, vet_tree

ROOT = Path(__file__).resolve().parent.parent


def timed(command: list[str], timeout: float) -> float | None:
    started = time.perf_counter()
    try:
        subprocess.run(command, capture_output=True, timeout=timeout, check=False)
    except subprocess.TimeoutExpired:
        return None
    return time.perf_counter() - started


def median_of(samples: list[float | None]) -> str:
    done = [s for s in samples if s is not None]
    return "> timeout" if len(done) < len(samples) else f"{statistics.median(done):.2f} s"


def bench(path: Path, repeat: int, mcp_vet: str | None, timeout: float) -> None:
    options = VetOptions(include_built=True)
    in_process = []
    for _ in range(repeat):
        started = time.perf_counter()
        result = vet_tree(path, options)
        in_process.append(time.perf_counter() - started)
    command = [sys.executable, "-c", "from scanner.cli.app import main; main()", "vet", str(path), "--include-built",
               "-q", "--fail-on", "none"]
    whole = [timed(command, timeout) for _ in range(repeat)]
    print(f"{path}: {result.files_scanned} files, {len(result.findings)} findings; vet_tree median "
          f"{statistics.median(in_process):.2f} s; `mcp-sandbox vet` median {median_of(whole)}")
    if mcp_vet:
        theirs = [timed([mcp_vet, str(path), "--json", "--no-files"], timeout) for _ in range(repeat)]
        print(f"{path}: mcp-vet median {median_of(theirs)} (timeout {timeout:.0f} s)")


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("paths", nargs="+", type=Path)
    parser.add_argument("--repeat", type=int, default=5)
    parser.add_argument("--mcp-vet", default=None, help="the mcp-vet executable, to pair with")
    parser.add_argument("--timeout", type=float, default=600.0)
    args = parser.parse_args()
    for path in args.paths:
        bench(path, args.repeat, args.mcp_vet, args.timeout)


if __name__ == "__main__":
    main()
