"""What `mcp-sandbox batch` achieves on this machine (issue 15's measurements), in four parts:

    .venv/bin/python benchmarks/bench_batch.py [--only throughput|fork|store|resume] [--record FILE]

1. throughput: cold scans per hour of SERVERS (20 small real npm and PyPI servers, pinned) with the embedded pool
   (`mcp-sandbox batch`, --jobs from the machine's defaults), then the same through Celery (`batch --broker` on a
   private redis-server, two local `mcp-sandbox worker`s). Cold: no installed image of any of them exists (the
   bench checks, and each report's install.cached says so); between the modes, and at the end, it removes the
   installed images its own scans committed (by id, from their reports; never forced, never another image). Where
   the time goes, summed over the targets: install, run (the rest of the scan), and the child-process overhead (the
   row's seconds less the scan's own total: start-up, imports, exit, the coordinator's bookkeeping). Goal: 300/h.
2. fork: that overhead paired, exec'd children against the fork server (scanner/batch/fork_server.py): the same
   warm scans of FORK_SERVERS through SubprocessBackend(fork=False) and (fork=True), sides alternating, medians.
3. store: the store's cost per target (claim, record, the progress counts: what the coordinator does per target),
   timed in isolation, paired against the same loop with no store; medians of rounds.
4. resume: a warm batch of RESUME_SERVERS SIGKILLed once half are done, then rerun: reports lost (none) and
   targets redone (none).

Heavy (1 runs 40 cold scans, two at a time): run it on a quiet machine; the figures of a loaded one say so (the load
average is recorded with them). Results: benchmarks/results/batch.json (--record).
"""

from __future__ import annotations

import argparse
import datetime
import json
import os
import signal
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "scripts"))
import batch_corpus  # noqa: E402  (scripts/batch_corpus.py: the batch runs and their per-target results)

RESULTS = ROOT / "benchmarks" / "results" / "batch.json"
REPO_ARGS = "-- --repository /workspace/projects/demo-repo"
SERVERS = [batch_corpus.Server(line.split()[0], line) for line in (  # npm and PyPI in turn: a --count prefix has both
    "npm:@modelcontextprotocol/server-memory@2026.7.4",
    "pypi:mcp-server-time==2026.8.18",
    "npm:@modelcontextprotocol/server-sequential-thinking@2026.7.4",
    "pypi:mcp-server-fetch==2026.8.18",
    "npm:@modelcontextprotocol/server-filesystem@2026.7.10 -- /workspace",
    f"pypi:mcp-server-git==2026.8.18 {REPO_ARGS}",
    "npm:@upstash/context7-mcp@1.0.13",
    "pypi:mcp-server-calculator==0.2.0",
    "npm:@modelcontextprotocol/server-memory@2025.11.25",
    "pypi:duckduckgo-mcp-server==0.6.1",
    "npm:@modelcontextprotocol/server-sequential-thinking@2025.12.18",
    "pypi:mcp-server-time==2026.1.26",
    "npm:@modelcontextprotocol/server-filesystem@2025.12.18 -- /workspace",
    "pypi:mcp-server-fetch==2026.7.10",
    "npm:@upstash/context7-mcp@1.0.31",
    f"pypi:mcp-server-git==2026.7.10 {REPO_ARGS}",
    "npm:@modelcontextprotocol/server-everything@2026.8.18 -- stdio",
    "pypi:mcp-server-calculator==0.1.2",
    "pypi:duckduckgo-mcp-server==0.5.0",
    "pypi:mcp-server-sqlite==2025.4.25 -- --db-path /home/mcp/bench.db",
)]
CELERY_NOTE = ("a row's seconds run from the coordinator's enqueue to its result, so the child overhead here includes "
               "the time a task waited on the broker for a free worker (--jobs is twice the workers)")
FORK_COUNT = 4  # the first servers, warm after part 1's embedded run
RESUME_COUNT = 8


def _installed(client: Any) -> dict[str, str]:
    """Every installed-server image: id -> `ecosystem:package@version`."""
    found = {}
    for image in client.api.images(filters={"label": ["io.mcp-sandbox.kind=installed"]}):
        labels = image.get("Labels") or {}
        found[image["Id"]] = (f"{labels.get('io.mcp-sandbox.ecosystem')}:{labels.get('io.mcp-sandbox.package')}"
                              f"@{labels.get('io.mcp-sandbox.version')}")
    return found


def _remove_new(client: Any, before: set[str]) -> dict[str, int]:
    """Remove the installed images of SERVERS that did not exist when the bench began (the ones its scans made),
    never forced (an image a container uses stays)."""
    from docker.errors import APIError, NotFound

    ours = {_identity(s) for s in SERVERS}
    removed = kept = 0
    for image_id, identity in sorted(_installed(client).items()):
        if image_id in before or identity not in ours:
            continue
        try:
            client.api.remove_image(image_id, force=False)
            removed += 1
        except NotFound:
            pass
        except APIError:
            kept += 1
    return {"removed": removed, "kept_in_use": kept}


def _breakdown(run: dict[str, Any]) -> dict[str, Any]:
    """Scans an hour and where the time went, from one batch run's per-target rows."""
    rows = [r for r in run["targets"].values() if r["state"] == "done"]
    install = sum(r["install_seconds"] or 0.0 for r in rows)
    scans = sum(r["scan_seconds"] or 0.0 for r in rows)
    overhead = [r["seconds"] - r["scan_seconds"] for r in rows if r["seconds"] and r["scan_seconds"]]
    return {"done": len(rows), "cold": sum(r["install_cached"] is False for r in rows),
            "wall_seconds": run["wall_seconds"], "scans_per_hour": round(len(rows) / run["wall_seconds"] * 3600, 1),
            "sum_install_seconds": round(install, 1), "sum_run_seconds": round(scans - install, 1),
            "sum_child_overhead_seconds": round(sum(overhead), 1),
            "median_child_overhead_seconds": round(statistics.median(overhead), 2) if overhead else None,
            "median_scan_seconds": round(statistics.median(r["scan_seconds"] for r in rows), 1) if rows else None}


def throughput(work: Path, servers: list[batch_corpus.Server], client: Any, before: set[str], parts: list[str],
               save: Any, jobs: int | None = None, celery_too: bool = True) -> dict[str, Any]:
    """Embedded, cold; then (on its warm images) the fork and resume parts when asked; then Celery, cold again.
    `save(key, value)` records each part as it ends."""
    warm = sorted(set(_installed(client).values()) & {_identity(s) for s in servers})
    targets = batch_corpus.write_targets(servers, work / "targets.txt")
    embedded = batch_corpus.run_batch(targets, work / "embedded", *(("--jobs", str(jobs)) if jobs else ()))
    embedded["targets"] = batch_corpus.results(work / "embedded")
    save("embedded", {"servers": [s.line for s in servers], "already_installed_before": warm,
                      "jobs": jobs or "default", **_breakdown(embedded)})
    if "fork" in parts:
        save("fork", fork_overhead(work / "fork", servers[:FORK_COUNT]))
    if "resume" in parts:
        save("resume", resume(work, servers[:RESUME_COUNT]))
    save("images_removed_after_embedded", _remove_new(client, before))
    if not celery_too:
        return {}
    with batch_corpus.redis_server(work / "redis") as url, \
            batch_corpus.workers(url, work / "worker-logs", count=batch_corpus.WORKERS):
        celery = batch_corpus.run_batch(targets, work / "celery", "--broker", url, "--jobs",
                                        str(2 * batch_corpus.WORKERS))
    celery["targets"] = batch_corpus.results(work / "celery")
    save("celery", {**_breakdown(celery), "workers": batch_corpus.WORKERS, "note": CELERY_NOTE})
    save("same_results", batch_corpus.compare(embedded["targets"], celery["targets"]))


def _identity(server: batch_corpus.Server) -> str:
    target = server.line.split()[0]
    ecosystem, _, rest = target.partition(":")
    name, version = rest.rsplit("==", 1) if ecosystem == "pypi" else rest.rsplit("@", 1)
    return f"{ecosystem}:{name}@{version}"


def fork_overhead(work: Path, servers: list[batch_corpus.Server], rounds: int = 1) -> dict[str, Any]:
    """Per-target overhead (job seconds less the scan's own total) of warm scans, exec'd against forked."""
    from scanner.batch.inputs import text_targets
    from scanner.batch.jobs import Job
    from scanner.batch.subprocess_backend import SubprocessBackend

    text = "".join(f"{s.line}\n" for s in servers)
    targets = text_targets(text, base=work, name="fork-servers")
    sides: dict[str, list[float]] = {"exec": [], "fork": []}
    for index in range(rounds * 2):
        side = ("exec", "fork")[index % 2]
        backend = SubprocessBackend(2, work / f"{side}-{index}", fork=side == "fork")
        pending = [Job(t.key, 1, t) for t in targets]
        try:
            sides[side] += _overheads(backend, pending)
        finally:
            backend.close()
    return {"servers": [s.line for s in servers], "rounds": rounds,
            **{f"median_{side}_seconds": round(statistics.median(v), 2) if v else None for side, v in sides.items()},
            "samples": {side: [round(x, 2) for x in v] for side, v in sides.items()}}


def _overheads(backend: Any, pending: list[Any]) -> list[float]:
    found, running = [], 0
    while pending or running:
        while pending and running < backend.capacity:
            backend.submit(pending.pop(0))
            running += 1
        for result in backend.collect(1.0):
            running -= 1
            report = json.loads(result.report_json) if result.report_json else {}
            total = (report.get("timings") or {}).get("total")
            if total:
                found.append(result.seconds - total)
    return found


def store_overhead(targets: int = 200, rounds: int = 5) -> dict[str, Any]:
    """Per target: the coordinator's store operations, against the same loop without them (ms, medians)."""
    from scanner.batch.store import ScanRecord, Store
    from scanner.batch.targets import BatchTarget

    batch = [BatchTarget(f"npm:bench-store-{i}@1.0.0") for i in range(targets)]
    record = ScanRecord(status="complete", verdict="pass", score=100, worst=None, ecosystem="npm", name="x",
                        version="1.0.0", findings=[{"rule": "S1", "severity": "info", "tool": "t"}] * 5,
                        report="reports/npm/x/1.0.0.json", scan_seconds=10.0)
    store_ms, bare_ms = [], []
    for _ in range(rounds):
        with tempfile.TemporaryDirectory(prefix="bench-store-") as tmp, Store.open(Path(tmp) / "b.sqlite") as store:
            store.add(batch)
            started = time.perf_counter()
            for index in range(targets):
                row = store.claim(float(index))
                assert row is not None
                store.record_done(row.key, record, float(index))
                store.row(row.key)
                store.counts()
            store_ms.append((time.perf_counter() - started) * 1000 / targets)
        started = time.perf_counter()
        rows = {t.key: "queued" for t in batch}
        for key in list(rows):
            rows[key] = "done"
            _ = (record.verdict, sum(1 for state in rows.values() if state == "done"))
        bare_ms.append((time.perf_counter() - started) * 1000 / targets)
    return {"targets": targets, "rounds": rounds, "median_store_ms_per_target": round(statistics.median(store_ms), 3),
            "median_no_store_ms_per_target": round(statistics.median(bare_ms), 3)}


def resume(work: Path, servers: list[batch_corpus.Server]) -> dict[str, Any]:
    """SIGKILL a warm batch once half its targets are done, rerun it; count lost reports and redone targets."""
    targets = batch_corpus.write_targets(servers, work / "resume.txt")
    out = work / "resume"
    first = subprocess.Popen([*batch_corpus.CLI, "batch", str(targets), "--out", str(out), "--retries", "0"],
                             cwd=ROOT, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    done_at_kill = _wait_done(first, out / "batch.sqlite", len(servers) // 2)
    os.kill(first.pid, signal.SIGKILL)
    first.wait()
    reports = {p: p.stat().st_mtime_ns for p in (out / "reports").rglob("*.json")}
    started = time.monotonic()
    rerun = subprocess.run([*batch_corpus.CLI, "batch", str(targets), "--out", str(out), "--retries", "0"], cwd=ROOT,
                           stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True, check=False)
    wall = round(time.monotonic() - started, 1)
    rescanned = [line for line in rerun.stderr.splitlines() if line.startswith("done    ")]
    after = batch_corpus.results(out)
    return {"targets": len(servers), "done_at_kill": len(done_at_kill),
            "reports_lost": sum(1 for p in reports if not p.is_file()),
            "reports_rewritten": sum(1 for p, m in reports.items() if p.is_file() and p.stat().st_mtime_ns != m),
            "redone": sum(1 for line in rescanned for t in done_at_kill
                          if line.startswith(f"done    {t}") and line[len(f"done    {t}")] in ": "),
            "scanned_by_rerun": len(rescanned), "done_after_rerun": sum(r["state"] == "done" for r in after.values()),
            "rerun_exit": rerun.returncode, "rerun_wall_seconds": wall}


def _wait_done(process: subprocess.Popen[bytes], db: Path, count: int) -> list[str]:
    import sqlite3

    while process.poll() is None:
        if db.is_file():
            connection = sqlite3.connect(f"file:{db}?mode=ro", uri=True, timeout=30)
            try:
                done = [json.loads(k)[0] for (k,) in connection.execute("SELECT key FROM targets WHERE state='done'")]
            finally:
                connection.close()
            if len(done) >= count:
                return done
        time.sleep(0.5)
    raise SystemExit("the batch ended before half its targets were done")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--only", choices=("throughput", "fork", "store", "resume"), action="append", default=[])
    parser.add_argument("--count", type=int, default=len(SERVERS), help="scan the first N of the servers")
    parser.add_argument("--jobs", type=int, default=None, help="scans at once in the embedded run (default: batch's)")
    parser.add_argument("--no-celery", action="store_true", help="time the embedded pool only")
    parser.add_argument("--record", type=Path, default=None, help=f"write the results here (e.g. {RESULTS})")
    args = parser.parse_args(argv)
    parts, servers = args.only or ["throughput", "fork", "store", "resume"], SERVERS[:args.count]
    result: dict[str, Any] = {"date": datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="seconds"),
                              "machine": batch_corpus.machine()}

    def save(key: str, value: Any) -> None:
        result[key] = value
        result["machine"]["load_now"] = [round(x, 2) for x in os.getloadavg()]
        text = json.dumps(result, indent=2)
        if args.record is not None:
            args.record.parent.mkdir(parents=True, exist_ok=True)
            args.record.write_text(text + "\n", encoding="utf-8")
        print(f"{key}: {json.dumps(value)[:400]}", file=sys.stderr, flush=True)

    import docker

    client = docker.from_env()
    before = set(_installed(client))
    if "store" in parts:
        save("store", store_overhead())
    try:
        with tempfile.TemporaryDirectory(prefix="bench-batch-") as tmp:
            work = Path(tmp)
            if "throughput" in parts:
                throughput(work, servers, client, before, parts, save, jobs=args.jobs, celery_too=not args.no_celery)
            if "fork" in parts and "throughput" not in parts:
                save("fork", fork_overhead(work / "fork", servers[:FORK_COUNT]))
            if "resume" in parts and "throughput" not in parts:
                save("resume", resume(work, servers[:RESUME_COUNT]))
    finally:
        save("images_removed_at_end", _remove_new(client, before))
    print(json.dumps(result, indent=2))
    return 0


if __name__ == "__main__":
    sys.exit(main())
