"""When the probe runner re-lists (P8): after every call up to 100 tools; a bigger listing every k-th call, at once
after a list_changed notification, and after the last call, a change charged to the calls since the last re-list."""

from __future__ import annotations

from scanner.probes.relist_cadence import RelistCadence, relist_every


def test_a_small_listing_is_re_listed_after_every_call_and_charged_to_that_call() -> None:
    cadence = RelistCadence()
    assert [cadence.after(f"probe {n}", tools=100, notifications=0) for n in range(3)] == [
        "probe 0", "probe 1", "probe 2"]
    assert cadence.pending(0) is None  # nothing left to re-list after the last call


def test_a_big_listing_is_re_listed_every_kth_call_and_the_change_names_the_calls_since() -> None:
    assert relist_every(3_000) == 30 and relist_every(101) == 2 and relist_every(0) == 1
    cadence = RelistCadence()
    due = [cadence.after(f"probe {n}", tools=3_000, notifications=0) for n in range(30)]
    assert due[:29] == [None] * 29
    assert due[29] == "one of the 30 probes since the last re-list, from probe 0 to probe 29"


def test_a_list_changed_notification_makes_the_re_list_due_at_once() -> None:
    cadence = RelistCadence()
    assert cadence.after("probe 0", tools=3_000, notifications=0) is None
    assert cadence.after("probe 1", tools=3_000, notifications=1) == (
        "one of the 2 probes since the last re-list, from probe 0 to probe 1")
    assert cadence.after("probe 2", tools=3_000, notifications=1) is None  # the same notification counts once


def test_the_calls_after_the_last_re_list_are_re_listed_at_the_end_unless_the_server_is_replaced() -> None:
    cadence = RelistCadence()
    cadence.after("probe 0", tools=3_000, notifications=0)
    assert cadence.pending(0) == "probe 0"
    cadence.after("probe 1", tools=3_000, notifications=0)
    cadence.drop()
    assert cadence.pending(0) is None
