"""`mcp-sandbox batch INPUT --out DIR`: vet every target of INPUT, N scans at once, resumably (scanner/batch/*).

The batch machinery (and through it the scan's) is imported inside the command, so `--help` stays fast."""

from __future__ import annotations

import sys
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

import typer

from scanner.cli.options import fail_on_option, max_calls_option, upstream_proxy_option
from scanner.errors import UsageError

if TYPE_CHECKING:
    from docker import DockerClient

    from scanner.batch.jobs import JobBackend
    from scanner.batch.progress import Progress
    from scanner.batch.runner import BatchOptions
    from scanner.batch.store import Store
    from scanner.batch.targets import BatchTarget

HELP = {
    "input": "A text file of targets (one a line, as for `scan`: TARGET [--command CMD] [-- ARGS...], # comments), a "
             "JSON export of the official MCP registry (server.json entries), or an MCP client config.",
    "out": "The batch directory: batch.sqlite (the store), reports/<ecosystem>/<name>/<version>.json, summary.md and "
           "summary.json. Rerun the same command on it to resume.",
    "jobs": "Scans at once (default: one a core, as many as the free memory holds at --memory each).",
    "retries": "Retries of a target that failed for a transient reason (registry 5xx or unreachable, install "
               "timeout, engine timeout), with backoff.",
    "latest": "Scan each registry package at its newest version, whatever version INPUT names.",
    "retry-failed": "Also requeue the targets a previous run recorded as failed, with a fresh retry budget.",
    "sarif": "Also write each target's report as SARIF beside its JSON report.",
    "markdown": "Also write each target's report as Markdown beside its JSON report.",
    "broker": "Run the scans on `mcp-sandbox worker` processes (one a Docker host) through this Celery broker "
              "(redis://HOST:PORT/DB, amqp://…, sqs://…) instead of on this machine, which then needs no Docker "
              "engine; --jobs is then the tasks queued or running at once (default 16). Needs "
              "mcp-sandbox\\[distributed].",
    "result-backend": "Where the workers put their results (default: the broker when it is Redis, else rpc://).",
    "cache-size": "Cap the installed-image cache at SIZE (e.g. 20g): after each target, the least recently used "
                  "cached installs are removed until the rest fits (images in use or used in the last 15 minutes "
                  "stay).",
    "since": "Another batch directory (or its batch.sqlite): skip the registry releases already vetted there, and "
             "diff each new release against the earlier one vetted there (changes_since, rules I12/I13) when this "
             "batch's own store has none.",
}
DISTRIBUTED_MISSING = ("{what} needs Celery and redis-py, which are not installed: "
                       "pip install 'mcp-sandbox[distributed]'")


def batch(
    input_path: Path = typer.Argument(..., metavar="INPUT", help=HELP["input"]),
    out: Path = typer.Option(..., "--out", help=HELP["out"]),
    jobs: int | None = typer.Option(None, "--jobs", min=1, max=64, help=HELP["jobs"]),
    retries: int = typer.Option(2, "--retries", min=0, max=10, help=HELP["retries"]),
    latest: bool = typer.Option(False, "--latest", help=HELP["latest"]),
    retry_failed: bool = typer.Option(False, "--retry-failed", help=HELP["retry-failed"]),
    fail_on: str = fail_on_option(),
    sarif_reports: bool = typer.Option(False, "--sarif-reports", help=HELP["sarif"]),
    markdown_reports: bool = typer.Option(False, "--markdown-reports", help=HELP["markdown"]),
    memory: str = typer.Option("512m", "--memory", help="Memory limit (memory+swap) of each server."),
    max_calls: int = max_calls_option(),
    upstream_proxy: str | None = upstream_proxy_option(),
    broker: str | None = typer.Option(None, "--broker", metavar="URL", help=HELP["broker"]),
    result_backend: str | None = typer.Option(None, "--result-backend", metavar="URL", help=HELP["result-backend"]),
    since: Path | None = typer.Option(None, "--since", metavar="DIR-OR-DB", help=HELP["since"]),
    cache_size: str | None = typer.Option(None, "--cache-size", metavar="SIZE", help=HELP["cache-size"]),
) -> None:
    """Vet every target of INPUT, each in its own sandbox with the full scan, N at once; resumable after any kill.

    Exit codes: 0 every target vetted completely, nothing at or above --fail-on; 1 a target has a finding at or above
    --fail-on (whatever else happened); 2 bad input; 3 a target was not vetted completely (failed, unsupported, or
    its scan incomplete) and none fails the gate; 130 interrupted (rerun to resume).
    """
    from scanner.batch.inputs import read_input
    from scanner.batch.jobs import ScanSettings
    from scanner.batch.runner import BatchOptions
    from scanner.cli.output import check_levels
    from scanner.cli.values import parse_size

    check_levels(fail_on, "info")
    parse_size(memory, "--memory")
    if broker is not None:
        check_broker_url(broker, "--broker")
        distributed_available("batch --broker")
    if broker is not None and cache_size is not None:
        raise UsageError("--cache-size caps this machine's image cache; with --broker each worker keeps its own "
                         "(give it to no batch, or run gc --images on the workers)")
    cache_bytes = parse_size(cache_size, "--cache-size") if cache_size is not None else None
    targets = read_input(input_path, latest=latest)
    since_store = _since_store(since)
    if since_store is not None:
        targets = _not_vetted(targets, since_store)
    _make_directory(out)
    options = BatchOptions(out=out.resolve(), retries=retries, sarif=sarif_reports, markdown=markdown_reports,
                           settings=ScanSettings(memory=memory, upstream_proxy=upstream_proxy, max_calls=max_calls),
                           since=since_store, cache_bytes=cache_bytes)
    place = _Place(jobs, broker, result_backend)
    raise typer.Exit(_run(targets, options, place, fail_on, retry_failed))


@dataclass(frozen=True)
class _Place:
    """Where the scans run: here (no broker), or on the workers of a Celery broker."""

    jobs: int | None
    broker: str | None = None
    result_backend: str | None = None


def check_broker_url(url: str, flag: str) -> None:
    from urllib.parse import urlsplit

    from scanner.batch.worker import BROKER_SCHEMES

    try:
        parts = urlsplit(url)
        parts.port  # noqa: B018 - a port that is not a number (or out of range) raises here, not mid-run
    except ValueError as exc:
        raise UsageError(f"{flag} {url!r} is not a URL ({exc}); e.g. redis://127.0.0.1:6379/0") from None
    if parts.scheme not in BROKER_SCHEMES or not parts.netloc and not url.startswith("sqs://"):
        raise UsageError(f"{flag} {url!r} is not a broker URL; give one of "
                         f"{', '.join(s + '://' for s in BROKER_SCHEMES)}, e.g. redis://127.0.0.1:6379/0")


def distributed_available(what: str) -> None:
    import importlib.util

    if importlib.util.find_spec("celery") is None or importlib.util.find_spec("redis") is None:
        raise UsageError(DISTRIBUTED_MISSING.format(what=what))


def _since_store(since: Path | None) -> Path | None:
    from scanner.batch.previous import store_path

    return None if since is None else store_path(since).resolve()


def _not_vetted(targets: list[BatchTarget], database: Path) -> list[BatchTarget]:
    """The targets --since has not vetted: a registry target naming its version is skipped when that release is done
    there; any other (a folder, a version to resolve) is scanned, its release found only by the scan."""
    from scanner.batch.previous import is_vetted

    kept = []
    for target in targets:
        parsed = None if target.unsupported or target.command or target.server_args else _registry(target.target)
        if parsed is None or not is_vetted(database, *parsed):
            kept.append(target)
    if len(kept) < len(targets):
        print(f"--since: {len(targets) - len(kept)} releases already vetted in {database}, not scanned again",
              file=sys.stderr)
    return kept


def _registry(target: str) -> tuple[str, str, str] | None:
    """(ecosystem, name, version) of a registry target that names its version, else None."""
    from scanner.pipeline.targets import VERSION_TEXT, parse_target

    if not target.startswith(("npm:", "pypi:")):
        return None
    parsed = parse_target(target)
    spec = (parsed.version_spec or "").removeprefix("==")
    return (parsed.ecosystem, parsed.name, spec) if spec and VERSION_TEXT.fullmatch(spec) else None


def _make_directory(out: Path) -> None:
    if out.exists() and not out.is_dir():
        raise UsageError(f"--out {out} is a file; give a directory (it is created if missing)")
    try:
        out.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise UsageError(f"cannot create --out {out}: {exc.strerror or exc}") from None


def _run(targets: list[BatchTarget], options: BatchOptions, place: _Place, fail_on: str,
         retry_failed: bool) -> int:
    from scanner.batch.progress import Progress
    from scanner.batch.runner import batch_lock
    from scanner.batch.store import Store
    from scanner.batch.summary import write_summary

    progress = Progress()
    with batch_lock(options.out), Store.open(options.out / "batch.sqlite") as store:
        # a distributed batch resumes the tasks a dead run had sent (they run on, or ended, on the workers)
        added = store.add(targets)
        abandoned = store.requeue_abandoned(keep_sent=place.broker is not None, now=time.time())
        requeued = store.requeue_failed() if retry_failed else 0
        counts = store.counts()
        progress.note(f"batch {options.out}: {sum(counts.values())} targets ({added} new, {counts['done']} done, "
                      f"{abandoned} left running by a dead run requeued, {requeued} failed requeued, "
                      + (f"{counts['running']} sent by a dead run to resume, " if counts["running"] else "")
                      + f"{counts['skipped']} unsupported)")
        try:
            interrupted = counts["queued"] + counts["running"] > 0 and _scan_queued(store, options, place, progress)
        except Exception:
            _summary_anyway(options.out, store, fail_on, progress)
            raise
        decision = write_summary(options.out, store.rows(), fail_on)
    progress.note(f"wrote {options.out / 'summary.md'}, summary.html and summary.json")
    if interrupted:
        print("interrupted; every sandbox was torn down; rerun the same command to resume", file=sys.stderr)
        return 130
    print(f"exit {decision.code}: {decision.reason}", file=sys.stderr)
    return decision.code


def _summary_anyway(out: Path, store: Store, fail_on: str, progress: Progress) -> None:
    """The run failed (the broker gone, the engine, the disk): the summary is still rewritten from the store, so it
    never shows an earlier run's exit code and targets while this one's new targets are not in it."""
    import sqlite3

    from scanner.batch.summary import write_summary

    try:
        write_summary(out, store.rows(), fail_on)
    except (OSError, sqlite3.Error) as exc:
        progress.note(f"could not rewrite the summary either ({type(exc).__name__}: {exc})")


def _scan_queued(store: Store, options: BatchOptions, place: _Place, progress: Progress) -> bool:
    """Run the queued rows; True when a Ctrl-C (or SIGTERM) stopped the run (after every sandbox was torn down)."""
    from scanner.batch.runner import run_batch
    from scanner.pipeline.interrupts import terminate_as_interrupt

    backend, after_stop, client = (_celery_backend(place, progress) if place.broker
                                   else _local_backend(options, place, progress))
    evict = (_cache_eviction(client, options.cache_bytes, progress)
             if options.cache_bytes is not None and client is not None else None)
    try:
        with terminate_as_interrupt(), progress.live():
            run_batch(store, backend, options, progress, after_done=evict)
    except KeyboardInterrupt:
        after_stop()
        return True
    after_stop()  # a dead run's scan still tearing down when this run began (its teardown refused) is gone too
    return False


def _local_backend(options: BatchOptions, place: _Place,
                   progress: Progress) -> tuple[JobBackend, Callable[[], None], DockerClient | None]:
    from sandbox.core import engine
    from scanner.batch.sizing import available_memory, default_jobs
    from scanner.batch.subprocess_backend import SubprocessBackend
    from scanner.cli.values import parse_size

    client = engine.connect()
    sweep_dead = dead_scan_sweep(client, progress)
    sweep_dead()
    count = place.jobs or default_jobs(parse_size(options.settings.memory, "--memory"), available=available_memory())
    progress.note(f"running {count} scans at once")
    backend = SubprocessBackend(count, options.out / "work", fork=True)  # scans forked from a pre-imported server
    return backend, sweep_dead, client


def _celery_backend(place: _Place, progress: Progress) -> tuple[JobBackend, Callable[[], None], DockerClient | None]:
    from scanner.batch.celery_backend import DEFAULT_CAPACITY, CeleryBackend, redacted
    from scanner.batch.worker import celery_app

    assert place.broker is not None
    backend = CeleryBackend(celery_app(place.broker, place.result_backend), place.jobs or DEFAULT_CAPACITY)
    backend.check_broker()
    progress.note(f"queueing up to {backend.capacity} scans at once on {redacted(place.broker)} "
                  "(run `mcp-sandbox worker --broker URL` on each Docker host)")
    return backend, lambda: None, None  # each worker's scan tore its own sandbox down


def dead_scan_sweep(client: DockerClient, progress: Progress) -> Callable[[], None]:
    """What dead scans (of a killed batch too) left behind; live ones are kept. Run at the start, and after the run
    (a scan killed after the grace period of a Ctrl-C, or one a killed batch left tearing down). An engine that does
    not answer is said, not raised: the scans' results are in the store, and the summary and exit code must follow."""
    from sandbox.core import gc
    from scanner.report.suppressions import plural

    def sweep() -> None:
        try:
            swept = gc.sweep(client)
        except _engine_errors() as exc:
            progress.note(f"could not look for what dead scans left ({_engine_reason(exc)}); `mcp-sandbox gc` "
                          "removes it")
            return
        kinds = (("container", swept.containers), ("network", swept.networks), ("volume", swept.volumes))
        if swept.total:
            progress.note("removed what dead scans left: "
                          + ", ".join(plural(len(found), kind) for kind, found in kinds if found))
        for line in swept.failed:
            progress.note(f"could not remove what a dead scan left: {line}")

    return sweep


def _cache_eviction(client: DockerClient, cache_bytes: int, progress: Progress) -> Callable[[], None]:
    """`--cache-size`: after each target done, the least recently used cached installs go until the rest fits. An
    engine that does not answer (one a hostile server keeps busy) is said; the next target done asks again."""
    from sandbox.core import image_cache

    policy = image_cache.Policy(max_bytes=cache_bytes)

    def evict() -> None:
        try:
            result = image_cache.evict(client, policy, time.time())
        except _engine_errors() as exc:
            progress.note(f"--cache-size: could not evict cached installs ({_engine_reason(exc)})")
            return
        if result.removed:
            progress.note(f"--cache-size: evicted {len(result.removed)} cached installs "
                          f"({result.freed_bytes / 1024**2:.0f} MiB)")
        for line in result.refused:
            progress.note(f"--cache-size: could not evict {line}")

    return evict


def _engine_errors() -> tuple[type[Exception], ...]:
    """What a Docker API call raises when the engine refuses, times out (EngineTimeout) or cannot be reached."""
    from docker.errors import DockerException
    from requests.exceptions import RequestException

    return DockerException, RequestException


def _engine_reason(exc: Exception) -> str:
    from sandbox.core.untrusted import escape_for_terminal

    return escape_for_terminal(f"{type(exc).__name__}: {exc}", 300)


def register(app: typer.Typer) -> None:
    app.command("batch")(batch)
