"""The probe phase across a session, against real sandboxes: ids a create returned are reused by the get and the
delete of the same entity (so a clean server's tools succeed), and a stdout flood in the session started after a
crash is named as the flood, not as a closed connection, and what a restarted session's server did on the wire (an
answer to no request, lines that are not JSON-RPC) is said as the first session's is."""

from __future__ import annotations

import pytest

from scanner.pipeline.inventory import Timeouts
from scanner.pipeline.scan import ScanOptions, run_scan
from scanner.probes.runner import ProbeOptions
from scanner.report.model import Report
from tests.sandbox_helpers import ZOO

pytestmark = pytest.mark.docker


def probe_zoo(command: str, **probe_options) -> Report:
    report = run_scan(ScanOptions(target=str(ZOO), command=command, timeouts=Timeouts(startup=30, request=10),
                                  probes=ProbeOptions(**{"timeout": 10.0, **probe_options})))
    assert report.sandbox.teardown.complete
    return report


def test_ids_a_create_returned_are_reused_so_the_get_and_the_delete_succeed(no_leftovers):
    report = probe_zoo("zoo-notes")
    generated = {p.tool: p for p in report.probes if p.kind == "generated"}
    assert list(generated) == ["list_notes", "create_note", "get_note", "delete_note"]
    created = report.probes[[p.tool for p in report.probes].index("create_note")]
    assert created.status == "ok"
    for name in ("get_note", "delete_note"):
        probe = generated[name]
        assert probe.status == "ok", (name, probe.preview)
        assert probe.reused == {"note_id": "create_note"} and probe.arguments["note_id"] in created.preview
    unknown = [p for p in report.probes if p.error_probe == "unknown_value" and p.tool == "get_note"]
    assert unknown and unknown[0].status == "tool_error" and not unknown[0].reused  # error probes stay as chosen
    assert not [f for f in report.findings if f.rule_id in ("P4", "P6", "P7")], report.findings
    assert report.errors == []


def test_a_flood_in_the_session_after_a_crash_is_named_as_the_flood(no_leftovers):
    report = probe_zoo("zoo-restart-flood", error_probes=False)
    assert [p.tool for p in report.probes] == ["crash_worker", "flush_cache"]
    crashed, flooded = report.probes
    assert crashed.status == "crashed" and any(f.rule_id == "P6" for f in report.findings)
    assert flooded.status == "crashed" and "flooded stdout" in (flooded.error or ""), flooded.error
    assert any("after restart 1" in e and "flooded stdout" in e for e in report.errors), report.errors
    assert report.status == "incomplete"


def test_stray_answers_and_noise_in_the_session_after_a_crash_are_said(no_leftovers):
    # Before: the restarted session's wire health was dropped with it, so the answer to no request and the log line
    # the server wrote there went unsaid, and the scan's only error was the crash's.
    report = probe_zoo("zoo-restart-strays", error_probes=False)
    assert [p.tool for p in report.probes] == ["crash_worker", "flush_cache"]
    assert report.probes[1].status == "ok" and any(f.rule_id == "P6" for f in report.findings)
    strays = [e for e in report.errors if "after restart 1" in e and "answers the scan did not read" in e]
    assert strays and "id 424242, never sent" in strays[0], report.errors
    assert any("after restart 1" in e and "non-JSON-RPC lines" in e and "cache flushed" in e for e in report.errors)
    assert report.status == "incomplete"


def test_a_tool_the_schema_rejects_added_after_a_call_is_said(no_leftovers):
    # Before: the transport took the added tool off each re-list's page and P8 compared the rest: the rug pull went
    # unsaid and the scan read complete.
    report = probe_zoo("zoo-rug-rejected", error_probes=False)
    assert report.probes and report.probes[0].status == "ok"
    rejected = [e for e in report.errors if "the MCP schema rejects" in e]
    assert rejected and "not in the first listing" in rejected[0] and "sync_keys" in rejected[0], report.errors
    assert report.status == "incomplete"
