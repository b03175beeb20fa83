"""A worker's time limits: the hard limit is the scan timeout plus the teardown grace (`worker --stop-grace`) plus a
margin, and a visibility timeout at or below it is refused (exit 2, one line), so a scan still running is never
handed to a second worker whatever grace is given."""

from __future__ import annotations

import pytest

from tests.sandbox_helpers import run_cli

pytest.importorskip("celery", reason="needs mcp-sandbox[distributed]")

BROKER = "redis://127.0.0.1:1/0"  # never reached: every case here is refused before the worker connects


def test_the_hard_limit_and_the_default_visibility_follow_the_stop_grace() -> None:
    from scanner.batch.worker import celery_app

    short = celery_app(BROKER, scan_timeout=60, stop_grace=10).conf
    assert (short.task_soft_time_limit, short.task_time_limit) == (60, 100)
    assert short.broker_transport_options["visibility_timeout"] == 700  # the hard limit + 600 s
    default = celery_app(BROKER, scan_timeout=60).conf
    assert default.task_time_limit == 180  # near miss: the default grace is 90 s


@pytest.mark.parametrize(("grace", "limit"), [("10", 100), (None, 180)])
def test_a_visibility_timeout_at_the_hard_limit_is_refused(grace: str | None, limit: int) -> None:
    options = ("--stop-grace", grace) if grace else ()
    result = run_cli("worker", "--broker", BROKER, "--scan-timeout", "60", *options,
                     "--visibility-timeout", str(limit), timeout=60)
    assert result.returncode == 2, result.stderr
    assert result.stderr.startswith(f"error: --visibility-timeout {limit} is not longer than a scan may take")
    assert f"--stop-grace {grace or 90}: {limit} s)" in result.stderr
    assert len(result.stderr.strip().splitlines()) == 1 and "Traceback" not in result.stderr


def test_a_stop_grace_below_the_least_is_refused_in_one_line() -> None:
    result = run_cli("worker", "--broker", BROKER, "--stop-grace", "1", timeout=60)
    assert result.returncode == 2
    assert result.stderr.startswith("error: Invalid value for '--stop-grace'")
    assert len(result.stderr.strip().splitlines()) == 1
