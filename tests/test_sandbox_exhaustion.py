"""Resource exhaustion, failed snapshots, start-up daemons and how teardown ends a server (issue 11 §6).

Pure parts first (the snapshot's own failure reports, the pids evidence, the process tree, the rule messages and
the views), then one live scan per zoo server of mcp_zoo/processes.py (and zoo-plain / zoo-stubborn for the ends)."""

from __future__ import annotations

import io

import pytest
from rich.console import Console

from sandbox.run.observe import Process, parse_snapshot
from sandbox.run.process_watch import ProcessTable
from scanner.pipeline.inventory import Timeouts
from scanner.pipeline.scan import ScanOptions, run_scan
from scanner.probes.call_behavior import fill_record, pids_limit_evidence
from scanner.probes.process_tree import classify, daemons
from scanner.probes.runner import ProbeOptions
from scanner.report.markdown import to_markdown
from scanner.report.model import (CallBehavior, ProcessSeen, Report, ResourceUse, SandboxInfo, ServerEnding,
                                  TargetInfo, TeardownInfo, process_summary)
from scanner.report.terminal import render
from scanner.rules.behavior import check_processes, check_resources
from tests.sandbox_helpers import ZOO

MARKS = b"@@MCP-SANDBOX-CGROUP@@\n@@MCP-SANDBOX-LISTING@@\n"
COUNTERS = b"/sys/fs/cgroup/memory.current 100 \n/sys/fs/cgroup/pids.events max %d \n"
FILES = b"f\t5\t1.0\t1.0\t1.0\t644\t/workspace/a\0f\t3\t1.0\t1.0\t1.0\t600\t/home/mcp/.env"


def look(listing: bytes | None, hits: int = 0, status: bytes | None = b"0", stderr: bytes = b""):
    out = COUNTERS % hits
    if listing is not None:
        out += MARKS + listing + (b"" if status is None else b"\0@@MCP-SANDBOX-END@@ " + status + b"\n")
    return parse_snapshot(out, stderr=stderr)


# ---- the snapshot says when it is not whole ---------------------------------------------------------------------------

def test_a_whole_listing_is_not_failed():
    snap = look(FILES)
    assert snap.failure is None and set(snap.files) == {"/workspace/a", "/home/mcp/.env"}


@pytest.mark.parametrize("snap,reason", [
    (look(FILES, status=None, stderr=b"sh: 1: Cannot fork\n"), "did not finish: sh: 1: Cannot fork"),
    (look(None, stderr=b"sh: 1: Cannot fork\n"), "printed no listing: sh: 1: Cannot fork"),
    (look(FILES, status=b"1"), "find exited with status 1"),
    (look(b"f\t0\t1.0\t1.0\t1.0\t644\t/workspace/" + b"x" * (8 * 1024 * 1024), status=None), "passed the 8 MiB cap"),
])
def test_a_listing_that_is_not_whole_is_failed_and_keeps_its_counters(snap, reason):
    assert snap.failed and reason in snap.failure and snap.files == {}
    assert snap.counters.pids_limit_hits == 0 and snap.counters.memory_bytes == 100  # read before any fork


def test_no_diff_is_taken_against_a_failed_snapshot():
    record = CallBehavior(call=0, tool="t", label="generated")
    fill_record(record, look(FILES), look(b"", status=None, stderr=b"sh: 1: Cannot fork"), {}, pids_now=(129, 128))
    assert record.files.deleted == [] and record.snapshot.startswith("failed (the file listing did not finish")
    assert record.resources.pids_limit_hit and "129 of 128 pids in use" in record.resources.pids_limit_evidence


def test_a_whole_pair_of_snapshots_still_diffs():
    record = CallBehavior(call=0, tool="t", label="generated")
    fill_record(record, look(FILES), look(b"f\t5\t1.0\t1.0\t1.0\t644\t/workspace/a"), {})
    assert record.snapshot == "ok" and record.files.deleted == ["/home/mcp/.env"]


# ---- pids evidence -----------------------------------------------------------------------------------------------------

def test_pids_events_rising_is_evidence_unless_the_look_before_failed():
    assert "rose from 0 to 3" in pids_limit_evidence(look(FILES, 0), look(FILES, 3), None)
    # the look before could not fork: its own refused forks are in the rise, so the counters prove nothing
    assert pids_limit_evidence(look(None, 0), look(FILES, 3), None) is None
    assert pids_limit_evidence(look(FILES, 2), look(FILES, 2), (40, 128)) is None  # near miss: below the limit
    assert "128 of 128" in pids_limit_evidence(look(None, 0), look(None, 3), (128, 128))


def test_b6_names_the_evidence():
    record = CallBehavior(call=0, tool="t", label="generated", resources=ResourceUse(
        pids_limit_hit=True, pids_limit_evidence="128 of 128 pids in use (the engine's stats)"))
    [finding] = check_resources(record, None, cpus=1.0)
    assert "process/thread limit (128 of 128 pids in use" in finding.message
    assert check_resources(CallBehavior(call=0, tool="t", label="generated"), None, cpus=1.0) == []


# ---- the process tree --------------------------------------------------------------------------------------------------

def test_a_child_of_init_that_is_not_the_server_is_a_daemon():
    table = ProcessTable([Process(100, 90, "docker-init -- zoo"), Process(101, 100, "python zoo"),
                          Process(105, 101, "python worker"), Process(107, 100, "sleep 600"),
                          Process(108, 107, "sh -c x"), Process(200, 90, "sh -c @@MCP-SANDBOX-CGROUP@@")],
                         init_pid=100)
    roles = {p.pid: p.role for p in classify(table)}
    assert roles == {101: "server", 105: "server child", 107: "daemon", 108: "daemon"}  # init and our exec left out
    assert [p.pid for p in daemons(classify(table))] == [107, 108]
    assert classify(ProcessTable(table.processes, init_pid=None)) == []


def test_b5_calls_a_start_up_daemon_a_daemon():
    record = CallBehavior(call=-1, label="start-up and listing", processes=[ProcessSeen(pid=7, args="sleep 600",
                                                                                        role="daemon")])
    [finding] = check_processes(record)
    assert "daemon" in finding.message and "reparented to the container's init" in finding.message
    assert check_processes(CallBehavior(call=-1, label="start-up and listing")) == []


# ---- the views ---------------------------------------------------------------------------------------------------------

def test_the_views_show_the_ending_and_the_processes():
    ending = ServerEnding(ended_by="sigkill", exit_code=137, seconds=4.1)
    assert ending.describe() == "ignored EOF, ignored SIGTERM, killed (SIGKILL), exit 137 after 4.1 s"
    seen = [ProcessSeen(pid=1, args="/venv/bin/python zoo", role="server"),
            ProcessSeen(pid=2, args="/bin/sleep 600", role="daemon")]
    assert process_summary(seen) == "1 server, 1 daemon (sleep)"
    report = Report(target=TargetInfo(kind="folder", name="zoo", requested="zoo"), sandbox=SandboxInfo(
        session="s", startup_processes=seen, teardown=TeardownInfo(complete=True, seconds=0.3, processes=seen,
                                                                   server_ending=ending)),
        behavior=[CallBehavior(call=0, tool="t", label="generated", snapshot="failed (the file listing passed "
                               "the 8 MiB cap)")])
    console = Console(file=io.StringIO(), width=200, record=True)
    render(report, console)
    text = console.export_text()
    assert "killed (SIGKILL)" in text and "1 server, 1 daemon (sleep)" in text and "failed snapshots" in text
    markdown = to_markdown(report)
    assert "Teardown: the server ignored EOF, ignored SIGTERM, killed" in markdown and "SIGKILL" in markdown
    assert "Failed snapshots: 1" in markdown and "Start-up processes: 1 server, 1 daemon" in markdown


# ---- live ----------------------------------------------------------------------------------------------------------------

def scan_zoo(command: str, timeout: float = 10.0) -> Report:
    report = run_scan(ScanOptions(target=str(ZOO), command=command, timeouts=Timeouts(startup=20, request=10),
                                  probes=ProbeOptions(timeout=timeout)))
    assert report.sandbox.teardown.complete
    return report


@pytest.mark.docker
def test_a_call_that_exhausts_the_pids_limit_is_reported_as_hitting_it(no_leftovers):
    report = scan_zoo("zoo-pids-exhaust")
    record = next(b for b in report.behavior if b.tool == "prefetch_pages")
    assert record.resources.pids_limit_hit and record.resources.pids_limit_evidence, record.resources
    # The exec path's look cannot fork at the limit; the observer's (docs/observer.md) needs no fork and is whole.
    assert report.sandbox.looks[0] in ("observer", "exec (the observer is turned off)")
    whole = report.sandbox.looks[0] == "observer"
    assert (record.snapshot == "ok") if whole else record.snapshot.startswith("failed ("), record.snapshot
    assert record.files.deleted == []
    assert any("process/thread limit" in f.message for f in report.findings if f.rule_id == "B6")
    assert not [f for f in report.findings if f.rule_id == "B1"]  # never "deleted N files"
    after = next(b for b in report.behavior if b.tool == "page_count")
    assert after.sandbox == 1 and after.snapshot == "ok"  # the next probe ran in a fresh sandbox


@pytest.mark.docker
def test_a_snapshot_past_its_size_cap_is_failed_never_deleted_files(no_leftovers):
    report = scan_zoo("zoo-many-files", timeout=30)
    record = next(b for b in report.behavior if b.tool == "warm_cache")
    assert record.snapshot == "failed (the file listing passed the 8 MiB cap)"
    assert record.files.deleted == [] and not [f for f in report.findings if f.rule_id == "B1"]


@pytest.mark.docker
def test_a_daemon_double_forked_at_start_up_is_listed_and_is_b5(no_leftovers):
    report = scan_zoo("zoo-daemon")
    startup = report.sandbox.startup_processes
    assert [p.role for p in startup if p.args.startswith("sleep")] == ["daemon"], startup
    assert any(p.role == "server" and "zoo-daemon" in p.args for p in startup)
    [b5] = [f for f in report.findings if f.rule_id == "B5"]
    assert b5.tool is None and "daemon" in b5.message and "sleep" in b5.message
    assert any(p.role == "daemon" for p in report.sandbox.teardown.processes)


@pytest.mark.docker
@pytest.mark.parametrize("command,ended_by,code", [
    ("zoo-plain", "eof", 0), ("zoo-eof-deaf", "sigterm", 143), ("zoo-stubborn", "sigkill", 137)])
def test_teardown_says_how_the_server_ended(command, ended_by, code, no_leftovers):
    report = scan_zoo(command)
    teardown = report.sandbox.teardown
    assert teardown.server_ending.ended_by == ended_by and teardown.server_ending.exit_code == code, teardown
    assert teardown.server_ending.seconds < 12  # bounded: EOF, SIGTERM and SIGKILL waits
    assert [p.role for p in teardown.processes][:1] == ["server"]


@pytest.mark.docker
def test_a_server_that_crashed_at_start_exited_before_teardown(no_leftovers):
    report = scan_zoo("zoo-crash")
    ending = report.sandbox.teardown.server_ending
    assert ending.ended_by == "exited before" and ending.exit_code == 3, ending
