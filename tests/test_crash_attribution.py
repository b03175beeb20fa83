"""P6 names the call that stopped the server: the engine's FinishedAt against the time the noticing call was sent."""

from __future__ import annotations

from datetime import datetime, timezone

import pytest

from scanner.probes.crash_attribution import (EXIT_AFTER_ANSWER_SECONDS, MAX_SUSPECTS, SLOP_SECONDS, Answered,
                                              died_before_sending, parse_engine_time, recent, suspects)
from scanner.probes.crash_replay import Undecided, charged_crash
from scanner.probes.model import ProbeCall
from scanner.rules.probe_crashes import crash_finding


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


def _call(tool: str, label: str = "generated") -> ProbeCall:
    return ProbeCall(tool=tool, label=label, arguments={}, kind="generated")


STOP, KILL, READ = _call("shutdown_worker"), _call("kill_process"), _call("recall")
NEXT = _call("kill_process", "error: missing required 'pid'")


def test_one_suspect_is_named_at_once() -> None:
    # gone 20 ms after a read-only answer, before the next call went out: the call before, as ever
    assert suspects([Answered(READ, 10.0)], NEXT, sent_at=10.03, finished=10.02) == [READ]
    # died while the next call was out, no answer in the window: the call out
    assert suspects([Answered(READ, 9.7)], NEXT, 10.01, 10.02) == [NEXT]
    late = 10.0 + EXIT_AFTER_ANSWER_SECONDS + 0.01
    assert suspects([Answered(STOP, 10.0)], NEXT, 10.01, late) == [NEXT]  # the window had passed
    assert suspects([Answered(STOP, 10.0)], NEXT, 10.01, None) == [NEXT]  # the engine cannot say when
    assert suspects([], NEXT, 10.01, 10.0) == [NEXT]  # nothing answered in this sandbox yet
    found = charged_crash([Answered(READ, 10.0)], NEXT, 10.03, 10.02, exit_code=0, stderr_tail="")
    assert not isinstance(found, Undecided) and found.tool == "recall" and "right after probe 'generated'" in found.message


def test_a_state_changing_answer_in_the_window_makes_more_than_one_suspect() -> None:
    # shutdown_worker answered at 10.0 and exits 20 ms later: 10 ms into the next call
    assert suspects([Answered(STOP, 10.0)], NEXT, sent_at=10.01, finished=10.02) == [STOP, NEXT]
    # or after a fast kill_process call was answered, before the call after it went out
    answered = [Answered(STOP, 10.0), Answered(KILL, 10.013)]
    assert suspects(answered, NEXT, sent_at=10.03, finished=10.02) == [STOP, KILL]
    # a tool annotated read-only is a suspect too: the annotation is the server's own word
    assert suspects([Answered(READ, 10.0), Answered(STOP, 10.01)], NEXT, 10.02, 10.03) == [READ, STOP, NEXT]
    held = charged_crash(answered, NEXT, 10.03, 10.02, exit_code=0, stderr_tail="bye")
    assert isinstance(held, Undecided) and held.suspects == (STOP, KILL) and not held.out


def test_the_runner_keeps_only_the_answers_a_crash_could_suspect() -> None:
    kept = recent([Answered(STOP, 9.0), Answered(KILL, 9.9)], now=10.0)
    assert [a.call for a in kept] == [KILL]


def test_what_sending_the_suspects_again_decides() -> None:
    held = Undecided((STOP, NEXT), NEXT, exit_code=0, stderr_tail="bye")
    assert held.again(STOP).label == "generated (sent again)" and held.again(STOP).tool == "shutdown_worker"
    stopped = held.stopped_by(STOP)
    assert stopped.rule_id == "P6" and stopped.tool == "shutdown_worker"
    assert "during probe 'error: missing required 'pid''" in stopped.message and "stopped it too" in stopped.message
    unreproduced = held.unreproduced(sent_again=True)  # the likeliest: the call out when it ended
    assert unreproduced.tool == "kill_process" and "'generated' of 'shutdown_worker' instead" in unreproduced.message
    assert "none of them stopped it" in unreproduced.message
    unsent = Undecided((STOP, KILL), NEXT, exit_code=0, stderr_tail="").unreproduced(sent_again=False)
    assert unsent.tool == "kill_process" and "before probe 'error: missing required 'pid'' was sent" in unsent.message
    assert "probing ended before they could be sent again" in unsent.message


def test_only_the_latest_suspects_are_sent_again() -> None:
    # a fast server answered many state-changing calls in the window: the latest few, the call out last
    many = [Answered(_call("write", f"probe {n}"), 10.0 + n / 1000) for n in range(12)]
    found = suspects(many, NEXT, sent_at=10.02, finished=10.03)
    assert len(found) == MAX_SUSPECTS and found[-1] is NEXT
    assert [call.label for call in found[:-1]] == [f"probe {n}" for n in range(12 - MAX_SUSPECTS + 1, 12)]


def test_a_suspect_that_leaves_the_fresh_server_unusable_is_said_so() -> None:
    held = Undecided((STOP, NEXT), NEXT, exit_code=0, stderr_tail="")
    unusable = held.unusable(STOP)
    assert unusable.tool == "kill_process" and "'generated' of 'shutdown_worker' left it unusable" in unusable.message
    assert "the others were not sent" in unusable.message
