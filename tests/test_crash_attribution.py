"""P6 names the call that stopped the server: the engine's FinishedAt against the time the noticing call was sent."""

from __future__ import annotations

from datetime import datetime, timezone

from scanner.probes.crash_attribution import SLOP_SECONDS, died_before_sending, parse_engine_time
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
