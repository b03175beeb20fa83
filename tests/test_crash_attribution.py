"""P6 names the call that stopped the server: the engine's FinishedAt against the time the noticing call was sent."""

from __future__ import annotations

from datetime import datetime, timezone

import pytest

from scanner.probes.crash_attribution import (SETTLE_SECONDS, SLOP_SECONDS, died_before_sending, parse_engine_time,
                                              settle_remaining)
from scanner.rules.probe import crash_finding


def test_engine_times_parse_with_nanoseconds_and_the_zero_time_is_none():
    seconds = parse_engine_time("2026-12-01T17:35:12.123456789Z")
    assert seconds == datetime(2026, 12, 1, 17, 35, 12, 123456, tzinfo=timezone.utc).timestamp()
    assert parse_engine_time("0001-01-01T00:00:00Z") is None
    assert parse_engine_time("junk") is None and parse_engine_time(None) is None


def test_a_server_gone_before_the_call_was_sent_was_stopped_by_the_call_before():
    assert died_before_sending(100.0, sent_at=100.5)
    # the observer's looks are fast: a server that stopped 20 ms after its answer ended ~30 ms before the next call
    assert died_before_sending(100.468, sent_at=100.5)
    # near misses: it died while this call ran, within the slop, or the engine cannot say
    assert not died_before_sending(100.6, sent_at=100.5)
    assert not died_before_sending(100.5 - SLOP_SECONDS / 2, sent_at=100.5)
    assert not died_before_sending(None, sent_at=100.5)


def test_the_p6_message_says_which_call_stopped_it_and_which_noticed():
    after = crash_finding("kill_process", "generated", exit_code=143, noticed_by="error: missing required 'pid'")
    assert after.tool == "kill_process" and "right after probe 'generated' answered" in after.message
    assert "missing required 'pid'" in after.message
    during = crash_finding("crash", "generated", exit_code=3)
    assert "during probe 'generated'" in during.message


def test_the_next_call_waits_out_the_settle_after_a_tool_that_may_change_state() -> None:
    writes = {"name": "shutdown_worker", "annotations": {"readOnlyHint": False, "destructiveHint": True}}
    assert settle_remaining(10.0, writes, now=10.01) == pytest.approx(SETTLE_SECONDS - 0.01)
    assert settle_remaining(10.0, {"name": "unannotated"}, now=10.0) == pytest.approx(SETTLE_SECONDS)
    assert settle_remaining(10.0, None, now=10.0) == pytest.approx(SETTLE_SECONDS)  # a tool no longer listed


def test_no_settle_after_a_read_only_tool_or_once_it_has_passed() -> None:
    reads = {"name": "recall", "annotations": {"readOnlyHint": True}}
    assert settle_remaining(10.0, reads, now=10.0) == 0.0
    assert settle_remaining(10.0, {"annotations": {"readOnlyHint": "true"}}, now=10.0) == pytest.approx(SETTLE_SECONDS)
    assert settle_remaining(10.0, {"name": "w"}, now=10.0 + SETTLE_SECONDS + 0.001) == 0.0
    assert settle_remaining(None, {"name": "w"}, now=10.0) == 0.0
