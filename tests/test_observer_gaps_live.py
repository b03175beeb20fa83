"""What a hostile server may hide from the after-call look, scanned live (tests/servers/zoo/mcp_zoo/observer_gaps.py):
every look made to fail, times set back after a read or a same-size rewrite, a process named like the scanner's own
exec, a write just after the last call's look. Each is either seen (its finding) or said (an error, so the scan is
incomplete), never a silent pass."""

from __future__ import annotations

import pytest

from tests.test_probes_live import findings, probe_zoo

pytestmark = pytest.mark.docker


def test_a_look_that_cannot_list_everything_is_said_and_the_scan_is_incomplete(no_leftovers):
    report = probe_zoo("zoo-gaps-unreadable")
    record = next(b for b in report.behavior if b.tool == "refresh_profile")
    assert record.snapshot.startswith("failed ("), record.snapshot
    assert any("refresh_profile" in line and "not seen" in line for line in report.errors), report.errors
    assert report.status == "incomplete" and report.verdict != "pass"
    assert findings(report, "B3", "refresh_profile")  # the watches saw its canary read, which needs no listing


def test_times_set_back_after_a_read_or_a_same_size_rewrite_are_still_seen(no_leftovers):
    report = probe_zoo("zoo-gaps-times-reset")
    read = [f.message for f in findings(report, "B3", "check_credentials")]
    assert any(".aws/credentials" in m for m in read), [f.message for f in report.findings]
    changed = [f.message for f in findings(report, "B1", "tidy_config") if f.severity == "error"]
    assert any("config.json" in m for m in changed), [f.message for f in report.findings]


def test_a_process_named_like_the_scanners_own_exec_is_still_b5(no_leftovers):
    report = probe_zoo("zoo-gaps-masked-process")
    [b5] = findings(report, "B5", "start_sync")
    assert b5.severity == "error" and "@@MCP-SANDBOX-CGROUP@@" in (b5.evidence or ""), b5  # a shell left running
    record = next(b for b in report.behavior if b.tool == "start_sync")
    assert any(p.args.startswith("tar -x -f - cache") for p in record.processes), record.processes


def test_a_write_just_after_the_last_calls_look_is_still_seen(no_leftovers):
    report = probe_zoo("zoo-gaps-late-write")
    assert any(".bashrc" in f.message for f in findings(report, "B4")), [f.message for f in report.findings]


def test_a_file_name_that_is_not_utf8_still_gives_a_json_report(no_leftovers):
    report = probe_zoo("zoo-gaps-bad-name")
    record = next(b for b in report.behavior if b.tool == "save_note")
    assert [p for p in record.files.created if p.startswith("/workspace/notes/caf\\xe9-")], record.files
    assert "caf\\\\xe9-" in report.model_dump_json()  # the report can be written (it could not: surrogates)
    assert findings(report, "B1", "save_note")


def test_a_canary_read_with_o_noatime_is_seen(no_leftovers):
    """The server owns its canaries, so it may open them with O_NOATIME, which leaves the access time the listing
    compares still: the observer's inotify watches on the planted files see the read all the same."""
    report = probe_zoo("zoo-gaps-noatime")
    assert findings(report, "B3", "check_credentials"), [f.message for f in report.findings]
