"""Time `mcp-sandbox check` logic on a generated 3,000-tool list and report peak memory.

    .venv/bin/python benchmarks/bench_check.py [--tools 3000] [--repeat 3]

Measures: parse the file, run rules S1-S14, score, and render JSON + SARIF + Markdown (the terminal view is left out:
it would time the terminal). Target: under 1 s for 3,000 tools on the project's 2-core machine.
"""

from __future__ import annotations

import argparse
import json
import random
import tempfile
import time
import tracemalloc
from pathlib import Path
from typing import Any

from scanner.cli.check import build_report
from scanner.config import Config
from scanner.report.markdown import to_markdown
from scanner.report.locations import file_artifact
from scanner.report.sarif import to_sarif
from scanner.tools_file import load_tools_file

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


def run_once(path: Path) -> tuple[float, int]:
    start = time.perf_counter()
    report = build_report(path, load_tools_file(path), Config())
    report.model_dump_json()
    json.dumps(to_sarif(report, file_artifact("tools.json")))
    to_markdown(report)
    return time.perf_counter() - start, len(report.findings)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--tools", type=int, default=3000)
    parser.add_argument("--repeat", type=int, default=3)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "tools.json"
        path.write_text(json.dumps({"tools": generate_tools(args.tools)}), encoding="utf-8")
        size = path.stat().st_size
        times = [run_once(path) for _ in range(args.repeat)]
        tracemalloc.start()
        run_once(path)
        _, peak = tracemalloc.get_traced_memory()
        tracemalloc.stop()
    best = min(t for t, _ in times)
    print(f"tools={args.tools} file={size / 1024:.0f} KiB findings={times[0][1]} "
          f"best={best:.3f}s runs={[round(t, 3) for t, _ in times]} peak_python_heap={peak / 2**20:.1f} MiB")


if __name__ == "__main__":
    main()
