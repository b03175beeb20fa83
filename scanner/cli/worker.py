"""`mcp-sandbox worker --broker URL`: serve the scans of distributed batches on this Docker host, one at a time.

Celery and the scan machinery are imported inside the command (`--help` and `--version` stay light), and only
with the distributed extra installed."""

from __future__ import annotations

import typer

from scanner.cli.batch import check_broker_url, distributed_available

HELP = {
    "broker": "The Celery broker the batch enqueues on (redis://HOST:PORT/DB, amqp://…, sqs://…).",
    "result-backend": "Where to put the results (default: the broker when it is Redis, else rpc://); as the batch's.",
    "scan-timeout": "Seconds one scan may take before it is ended (it tears its sandbox down) and reported as a "
                    "transient failure; the broker's visibility timeout is set longer than this.",
    "visibility-timeout": "Seconds after which the broker hands a task whose worker vanished mid-scan (killed, host "
                          "lost) to another worker (default: the scan's hard time limit plus 600 s). Shorter "
                          "redelivers sooner; it must be longer than the hard time limit (--scan-timeout + "
                          "--stop-grace + 30 s), or a scan still running is handed out twice. Give every worker of a "
                          "broker the same.",
    "stop-grace": "Seconds a scan that is ended (past --scan-timeout, revoked, the worker stopping) gets to tear its "
                  "sandbox down before it is killed (default 90, at least 5). Part of the hard time limit.",
    "loglevel": "Celery's log level (DEBUG, INFO, WARNING, ERROR).",
}


def worker(
    broker: str = typer.Option(..., "--broker", metavar="URL", help=HELP["broker"]),
    result_backend: str | None = typer.Option(None, "--result-backend", metavar="URL", help=HELP["result-backend"]),
    scan_timeout: int = typer.Option(1800, "--scan-timeout", min=60, max=86_400, help=HELP["scan-timeout"]),
    visibility_timeout: int | None = typer.Option(None, "--visibility-timeout", min=1, max=7 * 86_400,
                                                  help=HELP["visibility-timeout"]),
    stop_grace: int = typer.Option(90, "--stop-grace", min=5, max=3600, help=HELP["stop-grace"]),
    loglevel: str = typer.Option("INFO", "--loglevel", help=HELP["loglevel"]),
) -> None:
    """Pull scans from the broker and run each in its own sandbox session, one at a time, until stopped.

    Stateless: each scan runs in a temporary directory removed afterwards; its report goes back through the result
    backend to the batch that enqueued it. Needs a Docker engine and the runtime images on this host.
    """
    check_broker_url(broker, "--broker")
    distributed_available("worker")
    if loglevel.upper() not in ("DEBUG", "INFO", "WARNING", "ERROR"):
        from scanner.errors import UsageError

        raise UsageError(f"--loglevel {loglevel!r}: give DEBUG, INFO, WARNING or ERROR")
    from scanner.batch.worker import hard_limit, run_worker

    limit = hard_limit(scan_timeout, stop_grace)
    if visibility_timeout is not None and visibility_timeout <= limit:
        from scanner.errors import UsageError

        raise UsageError(f"--visibility-timeout {visibility_timeout} is not longer than a scan may take (the hard "
                         f"limit of --scan-timeout {scan_timeout} and --stop-grace {stop_grace}: {limit} s): a scan "
                         "still running would be handed to another worker; give more")
    from sandbox.core import engine, gc

    gc.sweep(engine.connect())  # fail now when no engine answers; remove what dead scans left on this host
    run_worker(broker, result_backend, scan_timeout, loglevel.upper(), visibility_timeout, stop_grace)


def register(app: typer.Typer) -> None:
    app.command("worker")(worker)
