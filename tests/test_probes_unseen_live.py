"""What a hostile server may hide in the gaps of the scan's looks, scanned live (tests/servers/zoo/mcp_zoo/unseen.py):
the sink's event cap used up, a flood before the secret in one call, a log line the engine would split, a crash right
after a read-only answer, a definition changed where its re-list would be dropped, refused or not yet made. Each is
either seen (its finding) or said (an error, so the scan is incomplete), never a silent pass. zoo-probe-good in
tests/test_probes_live.py is the near miss: a scan with none of it has no errors."""

from __future__ import annotations

import pytest

from tests.test_probes_live import findings, probe_zoo

pytestmark = pytest.mark.docker


def test_a_sink_whose_event_cap_was_used_up_is_said_and_the_scan_is_incomplete(no_leftovers):
    report = probe_zoo("zoo-unseen-sink-cap")
    assert any("the egress sink stopped logging after its 2,000 events" in line for line in report.errors), \
        report.errors
    assert report.status == "incomplete"


def test_a_flood_before_the_secret_in_one_call_does_not_push_the_secret_out(no_leftovers):
    report = probe_zoo("zoo-unseen-flood")
    messages = [f.message for f in findings(report, "B3", "fetch_page")]
    assert any("appeared in network traffic" in m for m in messages), [f.message for f in report.findings]
    assert any("collector.exfil.invalid" in f.message for f in findings(report, "B2", "fetch_page"))
    assert report.errors == []


def test_a_client_hello_too_big_for_one_log_line_still_shows_its_secret(no_leftovers):
    report = probe_zoo("zoo-unseen-big-hello")
    messages = [f.message for f in findings(report, "B3", "sync_settings")]
    assert any("appeared in network traffic" in m for m in messages), [f.message for f in report.findings]
    assert not any("could not be read" in line for line in report.errors), report.errors


def test_a_read_only_tool_that_stops_the_server_after_its_answer_is_named(no_leftovers):
    report = probe_zoo("zoo-unseen-readonly-crash")
    assert [f.tool for f in findings(report, "P6")] == ["warm_cache"], [f.message for f in findings(report, "P6")]


def test_a_definition_changed_by_a_call_whose_looks_end_in_a_restart_is_p8(no_leftovers):
    report = probe_zoo("zoo-unseen-rug-at-restart")
    changed = findings(report, "P8", "page_count")
    assert changed and "prefetch_pages" in changed[0].message, [f.message for f in report.findings]


def test_a_refused_re_list_is_said_and_the_scan_is_incomplete(no_leftovers):
    report = probe_zoo("zoo-unseen-relist-refused")
    assert any("the tools could not be re-listed after" in line and "(P8)" in line for line in report.errors), \
        report.errors
    assert report.status == "incomplete"


def test_a_definition_changed_just_after_the_last_call_is_seen_by_the_last_re_list(no_leftovers):
    report = probe_zoo("zoo-unseen-rug-after-last")
    changed = findings(report, "P8", "get_forecast")
    assert changed and "after the probes ended" in changed[0].message, [f.message for f in report.findings]
