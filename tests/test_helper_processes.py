"""B5 tells a server's helpers from processes left running: a non-shell child the server keeps under itself (a
library's `git cat-file --batch`) is an info; a shell, interpreter or fetcher, or a daemon outside the server's tree,
stays a warning or error; one that had exited by the next look (a self-check caught at the snapshot) is dropped."""

from __future__ import annotations

from sandbox.run.observe import Process
from scanner.probes.call_behavior import drop_exited, new_processes
from scanner.report.model import CallBehavior, ProcessSeen
from scanner.rules.behavior import check_processes

INIT, SERVER = 100, 101


def _table(*extra: Process) -> list[Process]:
    return [Process(INIT, 1, "/sbin/docker-init -- python -m mcp_server_git"),
            Process(SERVER, INIT, "python -m mcp_server_git"), *extra]


def _record(*processes: ProcessSeen) -> CallBehavior:
    return CallBehavior(call=3, tool="git_log", label="generated", processes=list(processes))


def test_new_processes_get_their_role_from_the_server_pid():
    now = _table(Process(200, SERVER, "git cat-file --batch"), Process(201, 200, "git-helper"),
                 Process(300, INIT, "sleep 600"))
    seen = new_processes(now, {INIT, SERVER}, server_pid=SERVER)
    assert [(p.pid, p.role) for p in seen] == [(200, "server child"), (201, "server child"), (300, "daemon")]
    assert [p.role for p in new_processes(now, {INIT, SERVER})] == [None, None, None]  # server unknown


def test_a_library_helper_child_of_the_server_is_an_info():
    [finding] = check_processes(_record(ProcessSeen(pid=200, args="git cat-file --batch-check", role="server child")))
    assert finding.severity == "info" and "helper" in finding.message and "git" in finding.message


def test_near_misses_a_shell_child_an_interpreter_or_a_daemon_stay_findings():
    shell = ProcessSeen(pid=201, args="/bin/sh -c curl x.invalid", role="server child")
    python = ProcessSeen(pid=202, args="python3 worker.py", role="server child")
    daemon = ProcessSeen(pid=300, args="sleep 600", role="daemon")
    unknown = ProcessSeen(pid=301, args="sleep 600")  # not classified: not a helper
    assert [f.severity for f in check_processes(_record(shell))] == ["error"]
    assert [f.severity for f in check_processes(_record(python))] == ["error"]
    assert [f.severity for f in check_processes(_record(daemon))] == ["warning"]
    assert [f.severity for f in check_processes(_record(unknown))] == ["warning"]
    helper = ProcessSeen(pid=200, args="git cat-file --batch", role="server child")
    [mixed] = check_processes(_record(helper, daemon))  # a helper beside a daemon: the daemon decides
    assert mixed.severity == "warning" and "sleep" in mixed.message and "git" not in mixed.message


def test_a_process_gone_by_the_next_look_is_dropped_and_one_still_alive_kept():
    transient = ProcessSeen(pid=210, args="/bin/sh -c python3 --version", role="server child")
    lasting = ProcessSeen(pid=211, args="/bin/sh -c sleep 600", role="server child")
    record = _record(transient, lasting)
    drop_exited(record, alive={INIT, SERVER, 211})
    assert [p.pid for p in record.processes] == [211]
    assert [f.severity for f in check_processes(record)] == ["error"]


def test_a_process_named_like_the_scanners_exec_is_the_scanners_only_when_the_engine_started_it():
    marked = ("sh -c sleep 600; : @@MCP-SANDBOX-CGROUP@@", "tar -x -f - cache 600")
    under_server = _table(Process(200, SERVER, marked[0]), Process(201, INIT, marked[1]))
    assert [p.pid for p in new_processes(under_server, {INIT, SERVER}, server_pid=SERVER)] == [200, 201]
    by_the_engine = _table(Process(400, 7, f"sh -c for f in x; do :; done; printf '{marked[0][-22:]}'"),
                           Process(401, 7, "tar -x -f - -C /"))  # parent 7: the engine's shim, outside
    assert new_processes(by_the_engine, {INIT, SERVER}, server_pid=SERVER) == []


def test_what_the_server_did_after_the_last_calls_look_is_named_so():
    from scanner.report.model import AFTER_LAST_CALL, FileChanges
    from scanner.rules.behavior import evaluate_behavior
    record = CallBehavior(call=-1, tool=None, label=AFTER_LAST_CALL, files=FileChanges(created=["/home/mcp/.bashrc"]),
                          processes=[ProcessSeen(pid=5, args="sh -c x", role="server child")])
    found = {f.rule_id: f.message for f in evaluate_behavior([], [], [record])}
    assert "after the last call's look" in found["B4"] and "~/.bashrc" in found["B4"]
    assert "after the last call's look" in found["B5"] and "start-up" not in found["B5"]
