"""The probe phase against real sandboxes: each misbehaving zoo server produces its finding, the well-behaved one
none of B1–B6. One installed zoo image serves every test (the install is cached by content hash)."""

from __future__ import annotations

import io
import json

import pytest
from rich.console import Console

from sandbox.run.observe import diff, parse_counters, parse_snapshot
from scanner.pipeline.inventory import Timeouts
from scanner.probes import phase as probe_phase
from scanner.rules.behavior import persistence_kind
from scanner.probes.fixtures import parse_fixtures
from scanner.probes.runner import ProbeOptions
from scanner.probes.value_generation import INVALID_HOST
from scanner.report.model import Report
from scanner.report.terminal import render
from scanner.pipeline.scan import ScanOptions, run_scan
from tests.sandbox_helpers import ZOO, run_cli

BEHAVIOUR = {"B1", "B2", "B3", "B4", "B5", "B6"}


def probe_zoo(command: str, network: str = "observe", **probe_options) -> Report:
    options = ProbeOptions(**{"timeout": 2.0, **probe_options})
    report = run_scan(ScanOptions(target=str(ZOO), command=command, timeouts=Timeouts(startup=20, request=10),
                                  probes=options, network=network))
    assert report.sandbox.teardown.complete
    return report


def findings(report: Report, rule: str, tool: str | None = None) -> list:
    return [f for f in report.findings if f.rule_id == rule and (tool is None or f.tool == tool)]


# ---- pure parts ------------------------------------------------------------------------------------------------------

def _look(listing: bytes, counters: bytes) -> bytes:
    """What the snapshot exec prints: counters, the marks, the listing and find's end mark (exit status 0)."""
    return counters + b"@@MCP-SANDBOX-CGROUP@@\n@@MCP-SANDBOX-LISTING@@\n" + listing + b"\0@@MCP-SANDBOX-END@@ 0\n"


def test_snapshot_parsing_and_diff():
    before = parse_snapshot(_look(b"f\t5\t1.0\t1.0\t1.0\t644\t/workspace/a\0f\t3\t1.0\t1.0\t1.0\t600\t/home/mcp/.env\0"
                                  b"f\t1\t1.0\t1.0\t1.0\t644\t/tmp/gone",
                                  b"/sys/fs/cgroup/memory.current 100 \n/sys/fs/cgroup/pids.events max 0 \n"))
    after = parse_snapshot(_look(b"f\t6\t2.0\t1.0\t1.0\t644\t/workspace/a\0f\t3\t1.0\t9.0\t1.0\t600\t/home/mcp/.env\0"
                                 b"f\t1\t2.0\t2.0\t1.0\t644\t/workspace/new file\twith tab",
                                 b"/sys/fs/cgroup/memory.current 100 \n/sys/fs/cgroup/pids.events max 2 \n"))
    assert not before.failed and not after.failed
    changes = diff(before, after)
    assert changes.created == ["/workspace/new file\twith tab"]
    assert changes.modified == ["/workspace/a"] and changes.deleted == ["/tmp/gone"]
    assert changes.read == ["/home/mcp/.env"]
    assert after.counters.pids_limit_hits == 2
    v1 = parse_counters("/sys/fs/cgroup/memory/memory.oom_control oom_kill_disable 0 under_oom 0 oom_kill 1 \n"
                        "/sys/fs/cgroup/cpuacct/cpuacct.usage 2500000000 \n")
    assert v1.oom_kills == 1 and v1.cpu_seconds == 2.5


def test_a_change_time_that_moved_alone_is_a_change_and_a_read():
    """A same-size rewrite or a read whose times the server set back with utime moves only the ctime."""
    record = b"f\t3\t1.0\t1.0\t%s\t600\t/home/mcp/.env"
    before, after = (parse_snapshot(_look(record % ctime, b"")) for ctime in (b"1.0", b"7.0"))
    changes = diff(before, after)
    assert changes.modified == ["/home/mcp/.env"] and changes.read == ["/home/mcp/.env"]
    assert diff(before, before).modified == [] and diff(before, before).read == []  # near miss: nothing moved


def test_a_file_name_that_is_not_utf8_is_written_as_escapes_in_the_record():
    from scanner.probes.call_behavior import fill_record
    from scanner.report.model import CallBehavior
    before = parse_snapshot(_look(b"f\t1\t1.0\t1.0\t1.0\t644\t/workspace/a", b""))
    created = b"f\t1\t2.0\t2.0\t2.0\t644\t/workspace/caf\xe9"
    after = parse_snapshot(_look(b"f\t1\t1.0\t1.0\t1.0\t644\t/workspace/a\0" + created, b""))
    record = CallBehavior(call=0, tool="t", label="generated")
    fill_record(record, before, after, {})
    assert record.files.created == ["/workspace/caf\\xe9"] and "caf\\\\xe9" in record.model_dump_json()


@pytest.mark.parametrize("path,kind", [
    ("/home/mcp/.bashrc", "shell start-up file"), ("/home/mcp/.config/autostart/x.desktop", "autostart entry"),
    ("/home/mcp/.config/systemd/user/evil.service", "scheduled job"),
    ("/workspace/projects/demo-repo/.git/hooks/pre-commit", "git hook"),
    ("/home/mcp/.cursor/mcp.json", "MCP client config"), ("/workspace/.vscode/mcp.json", "MCP client config"),
    ("/workspace/notes/todo.txt", None), ("/workspace/projects/demo-repo/.git/hooks/pre-commit.sample", None),
    ("/home/mcp/.bash_aliases", "shell start-up file"), ("/home/mcp/.local/bin/git", "command on PATH"),
    ("/home/mcp/bin/ls", "command on PATH"), ("/workspace/.vscode/tasks.json", "autostart entry"),
    ("/home/mcp/.local/share/notes.txt", None), ("/workspace/bin/run.sh", None),
])
def test_persistence_paths(path, kind):
    assert persistence_kind(path) == kind


# ---- live ------------------------------------------------------------------------------------------------------------

@pytest.mark.docker
def test_a_well_behaved_server_has_no_behaviour_findings(no_leftovers):
    report = probe_zoo("zoo-probe-good")
    assert report.errors == []
    assert {f.rule_id for f in report.findings} & BEHAVIOUR == set(), report.findings
    assert {p.tool for p in report.probes} == {"read_note", "sum_numbers", "save_note"}
    assert next(p.tool for p in report.probes) == "read_note"  # read-only tools first
    saved = [b for b in report.behavior if b.tool == "save_note" and b.files.created]
    assert saved and saved[0].files.created[-1].startswith("/workspace/output/")  # seen, but honest
    assert not findings(report, "P4"), findings(report, "P4")
    assert all(p.response is None for p in report.probes)  # no --include-responses


@pytest.mark.docker
def test_annotations_that_lie_are_caught(no_leftovers):
    report = probe_zoo("zoo-probe-liar")
    read_only = findings(report, "B1", "list_notes")
    assert read_only and "readOnlyHint" in read_only[0].message and "/workspace/notes/todo.txt" in read_only[0].message
    overwrite = findings(report, "B1", "tidy_readme")
    assert overwrite and "destructiveHint" in overwrite[0].message and "README.md" in overwrite[0].message
    assert report.verdict == "block"


@pytest.mark.docker
def test_no_destructive_calls_only_read_only_tools(no_leftovers):
    report = probe_zoo("zoo-probe-liar", no_destructive=True)
    assert {p.tool for p in report.probes} == {"list_notes"}


@pytest.mark.docker
def test_a_canary_posted_to_an_invalid_host_is_caught_by_the_egress_sink(no_leftovers):
    report = probe_zoo("zoo-probe-exfil")  # observe mode: the sink answers the lookup and takes the POST
    messages = [f.message for f in findings(report, "B3", "sync_settings")]
    assert any("were read" in m and "~/.aws/credentials" in m for m in messages), messages
    assert any("appeared in network traffic" in m for m in messages), messages
    egress = [f.message for f in findings(report, "B2", "sync_settings")]
    assert any("collector.exfil.invalid" in m for m in egress), egress
    record = next(b for b in report.behavior if b.tool == "sync_settings")
    assert {e.how for e in record.canaries} == {"read", "egress"}
    assert any(e.get("method") == "POST" for e in record.egress), record.egress


@pytest.mark.docker
def test_egress_is_graded_by_what_the_tool_declares_and_was_asked(no_leftovers):
    report = probe_zoo("zoo-probe-egress")
    egress = {(f.tool, f.message.split()[4]): f for f in findings(report, "B2")}
    assert {key: f.severity for key, f in egress.items()} == {
        ("fetch_page", INVALID_HOST): "info",  # the scanner's own probe URL, from the arguments
        ("web_search", "search.zoo-engine.invalid"): "warning",  # no annotations: MCP's default is an open world
        ("get_time", "telemetry.zoo-vendor.invalid"): "error",  # annotated openWorldHint: false
        (None, "updates.zoo-vendor.invalid"): "error",  # at start-up, before the first probe
    }, [f.message for f in findings(report, "B2")]
    assert f"asked to reach ({INVALID_HOST}, from the arguments)" in egress["fetch_page", INVALID_HOST].message
    assert "start-up" in egress[None, "updates.zoo-vendor.invalid"].message
    telemetry = egress["get_time", "telemetry.zoo-vendor.invalid"].message
    calls = sum(1 for p in report.probes if p.tool == "get_time")
    assert calls >= 3 and f"in {calls} calls (" in telemetry, telemetry  # one finding, every call listed
    assert all("nothing left the host" in f.message for f in egress.values())
    assert [f.tool for f in findings(report, "B1")] == ["get_time"]
    assert report.verdict == "block"


@pytest.mark.docker
def test_with_no_network_the_echoed_canary_is_caught_in_the_response(no_leftovers):
    report = probe_zoo("zoo-probe-exfil", network="none")  # DNS fails; the sloppy error echoes the payload
    messages = [f.message for f in findings(report, "B3", "sync_settings")]
    assert any("appeared in the tool's response" in m for m in messages), messages
    record = next(b for b in report.behavior if b.tool == "sync_settings")
    assert {e.how for e in record.canaries} == {"read", "response"} and record.egress == []
    assert findings(report, "B2") == []


@pytest.mark.docker
def test_writing_to_bashrc_is_persistence(no_leftovers):
    report = probe_zoo("zoo-probe-persist")
    assert any("~/.bashrc" in f.message for f in findings(report, "B4", "configure_shell"))
    assert any("git hook" in f.message for f in findings(report, "B4", "enable_commit_checks"))
    # an unannotated tool may write files, but not these: each runs code later, and was no finding at all
    assert any("command on PATH" in f.message and "~/.local/bin/git" in f.message
               for f in findings(report, "B4", "install_shortcut"))
    assert any("autostart entry" in f.message and "tasks.json" in f.message
               for f in findings(report, "B4", "add_build_task"))
    # a repository's own config is read when a call wrote it: a command in it is a hook by another name
    assert any("demo-repo/.git/config (core.fsmonitor)" in f.message for f in findings(report, "B4", "tune_repository"))
    init = next(b for b in report.behavior if b.tool == "init_repository")
    assert any(p.endswith("demo-repo/.git/config") for p in init.files.modified), init.files  # near miss: written,
    assert findings(report, "B4", "init_repository") == [] and init.files.runs_commands == []  # but runs nothing


@pytest.mark.docker
def test_children_left_running_are_caught(no_leftovers):
    report = probe_zoo("zoo-probe-forker")
    found = findings(report, "B5", "start_workers")
    assert found and "sleep" in found[0].message
    record = next(b for b in report.behavior if b.tool == "start_workers")
    assert len(record.processes) == 2


@pytest.mark.docker
def test_oom_crash_is_recorded_and_the_server_restarted(no_leftovers):
    report = probe_zoo("zoo-probe-hog")
    by_tool = {p.tool: p for p in report.probes}
    assert by_tool["build_index"].status == "crashed"
    assert findings(report, "P6", "build_index")
    assert any("OOM" in f.message for f in findings(report, "B6", "build_index"))
    assert by_tool["warm_pool"].status == "ok"  # probed in a fresh sandbox
    # index_status answered just before the crash: when within 250 ms of it (the OOM kill's timing varies), a suspect
    # whatever its readOnlyHint says, so both were sent again in sandbox 1 (build_index stopped that one too)
    sent_again = [p.tool for p in report.probes if p.label == "generated (sent again)"]
    assert sent_again in ([], ["index_status", "build_index"]), sent_again
    pool = next(b for b in report.behavior if b.tool == "warm_pool")
    assert pool.sandbox == (2 if sent_again else 1) and pool.resources.pids_limit_hit
    assert any("process/thread limit" in f.message for f in findings(report, "B6", "warm_pool"))
    assert report.errors == []


@pytest.mark.docker
def test_hung_and_spinning_calls_time_out(no_leftovers):
    report = probe_zoo("zoo-probe-sleeper", timeout=1.5)
    assert {p.tool: p.status for p in report.probes} == {"wait_for_event": "timeout", "crunch_numbers": "timeout"}
    assert findings(report, "P7", "wait_for_event") and findings(report, "P7", "crunch_numbers")
    assert any("CPU-seconds" in f.message for f in findings(report, "B6", "crunch_numbers"))
    assert not findings(report, "B6", "wait_for_event")  # sleeping is not burning


@pytest.mark.docker
def test_a_description_that_changes_after_a_call_is_a_rug_pull(no_leftovers, monkeypatch):
    outcomes = []
    summarize = probe_phase.summarize
    monkeypatch.setattr(probe_phase, "summarize",
                        lambda holder: outcomes.append(holder.outcome) or summarize(holder))
    report = probe_zoo("zoo-probe-rugpull")
    changed = findings(report, "P8", "get_forecast")
    assert changed and changed[0].severity == "error" and changed[0].category == "security"
    assert "id_rsa" in changed[0].evidence
    # the poisoned definition gets its own static findings, not only the diff
    assert any("re-listed after" in f.message for f in findings(report, "S8", "get_forecast"))
    assert report.verdict == "block"
    # the server's notifications/tools/list_changed reached the runner through the SDK's public message_handler
    assert outcomes and outcomes[0].list_changed_notifications >= 1


@pytest.mark.docker
def test_opaque_errors_are_flagged_and_helpful_ones_are_not(no_leftovers):
    report = probe_zoo("zoo-probe-errors")
    assert any("opaque" in f.message for f in findings(report, "P4", "lookup_invoice"))
    assert not findings(report, "P4", "lookup_order")
    assert {p.error_probe for p in report.probes if p.tool == "lookup_order"} >= {
        "missing_required", "wrong_type", "invalid_enum", "unknown_value"}


@pytest.mark.docker
def test_fixtures_replace_generated_probes_and_bad_ones_are_refused(no_leftovers):
    fixtures = parse_fixtures({"version": 1, "probes": [
        {"tool": "lookup_order", "label": "known order", "args": {"order_id": "ORD-1001", "format": "detailed"}},
        {"tool": "lookup_order", "label": "bad format", "args": {"order_id": "ORD-1", "format": "huge"}},
        {"tool": "lookup_invoice", "label": "skipped", "args": {}, "skip": True},
    ]}, source="inline", env={}, fixtures_dir="/workspace")
    report = probe_zoo("zoo-probe-errors", fixtures=fixtures, error_probes=False, include_responses=True)
    calls = [(p.tool, p.label, p.kind) for p in report.probes]
    assert ("lookup_order", "known order", "fixture") in calls
    assert not any(tool == "lookup_order" and kind == "generated" for tool, _, kind in calls)
    assert ("lookup_invoice", "generated", "generated") in calls  # no fixture for it: generated
    refused = findings(report, "FX", "lookup_order")
    assert refused and "'huge' is not one of" in refused[0].message
    assert next(p for p in report.probes if p.label == "known order").response.startswith("Order ORD-1001")


@pytest.mark.docker
def test_no_probes_calls_nothing(no_leftovers):
    report = probe_zoo("zoo-probe-liar", enabled=False)
    assert report.probes == [] and report.behavior == [] and not findings(report, "B1")


@pytest.mark.docker
def test_cli_shows_the_probe_table_and_gates_on_behaviour(tmp_path, no_leftovers):
    out = tmp_path / "report.json"
    result = run_cli("scan", str(ZOO), "--command", "zoo-probe-persist", "--probe-timeout", "5", "--json", str(out))
    assert result.returncode == 1, result.stderr[-2000:]
    assert "Probes (" in result.stdout and "configure_shell" in result.stdout
    data = json.loads(out.read_text())
    assert data["probes"] and data["behavior"] and any(f["rule_id"] == "B4" for f in data["findings"])
    skipped = run_cli("scan", str(ZOO), "--command", "zoo-probe-persist", "--no-probes", "--json", "-")
    assert json.loads(skipped.stdout)["probes"] == []


@pytest.mark.docker
def test_probe_table_escapes_untrusted_text(no_leftovers):
    report = probe_zoo("zoo-hostile-text")
    buffer = io.StringIO()
    render(report, Console(file=buffer, width=200, color_system=None, force_terminal=False))
    shown = buffer.getvalue()
    assert "Probes (" in shown
    for raw in ("\x1b", "\x07", "\u202e"):
        assert raw not in shown


@pytest.mark.docker
def test_init_fixtures_writes_a_starter_file_from_the_live_tools(tmp_path, no_leftovers):
    path = tmp_path / "fixtures.json"
    result = run_cli("init-fixtures", str(path), str(ZOO), "--command", "zoo-probe-errors")
    assert result.returncode == 0, result.stderr[-2000:]
    written = json.loads(path.read_text())
    assert [p["tool"] for p in written["probes"]] == ["lookup_order", "lookup_invoice"]
    assert run_cli("init-fixtures", str(path), str(ZOO), "--command", "zoo-probe-errors").returncode == 2


@pytest.mark.docker
def test_a_secret_read_once_at_import_is_there_to_read_and_caught(no_leftovers):
    """zoo-import-stealer reads ~/.aws/credentials once, as its first act, and gives up when it is missing: the
    server's boot used to race the seeding, so it found nothing and the scan passed it (3 of 3 runs). The start gate
    holds the server's own code until the canaries are planted (sandbox/run/start_gate.py)."""
    report = probe_zoo("zoo-import-stealer")
    startup = next(b for b in report.behavior if b.call == -1 and b.sandbox == 0)
    assert [e.how for e in startup.canaries if e.where.endswith(".aws/credentials")] == ["read"], startup.canaries
    assert any("~/.aws/credentials" in f.message for f in findings(report, "B3")), report.findings
    assert report.verdict == "block"


@pytest.mark.docker
def test_a_gated_server_whose_seeding_exec_cannot_start_still_starts_and_is_listed(monkeypatch, no_leftovers):
    """The engine refuses the seeding's `tar -x` exec, which was also to open the start gate: the gate is opened by an
    exec of its own (sandbox/run/seeding.py, `_open_gate_alone`), so the server starts, is listed, and probing is
    skipped with the reason. Without that, the server waited at its gate until the handshake timed out: no tools."""
    from docker.api.exec_api import ExecApiMixin
    from docker.errors import APIError

    refused: list[list[str]] = []
    create = ExecApiMixin.exec_create

    def no_tar(self, container, cmd, *args, **kwargs):
        if isinstance(cmd, list) and "tar" in cmd:
            refused.append(cmd)
            raise APIError("exec refused by the test")
        return create(self, container, cmd, *args, **kwargs)

    monkeypatch.setattr(ExecApiMixin, "exec_create", no_tar)
    report = probe_zoo("zoo-plain")
    assert refused, "the seeding's tar exec was never asked for"
    assert [t["name"] for t in report.tools] and report.probes == [], report.tools
    reasons = [s.reason for s in report.skipped if s.stage == "probes"]
    assert reasons == ["probing skipped: could not seed the sandbox: could not start tar in the sandbox: "
                       "exec refused by the test"], report.skipped
    assert report.status == "incomplete" and report.verdict != "pass"


@pytest.mark.docker
def test_a_canary_read_at_start_up_before_the_first_look_is_caught(no_leftovers):
    """zoo-startup-reader polls for ~/.aws/credentials from its start and reads it the moment it is planted, before
    the baseline look and the observer's watches: the scan came out complete and clean. The baseline now shows the
    file's atime past its ctime: a read in the start-up record, B3."""
    report = probe_zoo("zoo-startup-reader")
    startup = next(b for b in report.behavior if b.call == -1 and b.sandbox == 0)
    assert [(e.how, e.where) for e in startup.canaries if e.where.endswith(".aws/credentials")] == [
        ("read", next(e.where for e in startup.canaries))], startup.canaries
    messages = [f.message for f in findings(report, "B3")]
    assert any("~/.aws/credentials" in m and "start-up" in m for m in messages), messages
    assert report.verdict == "block"


def test_a_file_read_since_its_last_change_is_told_from_one_planted_unread() -> None:
    from sandbox.run.observe import FileEntry, Snapshot, read_since_changed

    def entry(path: str, atime: float, ctime: float, kind: str = "f") -> FileEntry:
        return FileEntry(path=path, kind=kind, size=1, mtime=100.0, atime=atime, ctime=ctime, mode="600")

    files = [entry("/h/read", 2_000.01, 2_000.0), entry("/h/planted", 1_999.9, 2_000.0),
             entry("/h/busybox", 100.0, 2_000.0), entry("/h/same-tick", 2_000.0, 2_000.0),
             entry("/h/dir", 3_000.0, 2_000.0, kind="d"), entry("/h/no-ctime", 3_000.0, 0.0)]
    snapshot = Snapshot(taken_at=0.0, files={e.path: e for e in files}, counters=None)  # type: ignore[arg-type]
    assert read_since_changed(snapshot) == ["/h/read"]
