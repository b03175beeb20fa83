"""The observer's process table and what it saves (docs/observer.md, "Processes"): a `look` answer carries the pid
namespace's processes after the snapshot, and a Watch asks the engine's `top` again only when that table changed
since the `top` it holds, or when that `top` did not list as many processes as the table (a change between the two).
No container: the agent runs on this machine's /proc, the engine is a stand-in that counts its `top` calls."""

from __future__ import annotations

import io
import os
from dataclasses import dataclass, field
from typing import Any

import pytest

from sandbox.run import observe, observer_agent as agent
from sandbox.run.observe import Snapshot
from sandbox.run.observer import ObserverLost, Signature, _framed_parts, parse_table
from sandbox.run.observer_watch import Watch

SETTINGS = {"watched": [], "cgroup_files": [], "cgroup_mark": observe.CGROUP_MARK,
            "listing_mark": observe.LISTING_MARK, "end_mark": observe.END_MARK, "max_bytes": 1 << 20}
NONCE = b"0123456789abcdef0123456789abcdef"


def test_a_look_answer_is_the_snapshot_then_this_pid_namespaces_processes():
    stdout = io.BytesIO()
    agent.serve(io.BytesIO(b"look " + NONCE + b"\n"), stdout, SETTINGS)
    answer = bytearray(stdout.getvalue().split(b"\n", 1)[1])
    body, table = _framed_parts(answer, NONCE, True)
    assert observe.parse_snapshot(body[: len(body) - table]).failure is None
    rows = parse_table(body[len(body) - table:])
    assert rows is not None
    mine = [row for row in rows if row[0] == os.getpid()]
    assert len(mine) == 1 and mine[0][1] == os.getppid() and "pytest" in mine[0][3]
    with open(f"/proc/{os.getpid()}/stat", "rb") as handle:  # the start time is field 22, in clock ticks
        assert mine[0][2] == int(handle.read().rsplit(b")", 1)[1].split()[19])


def test_a_snapshot_request_still_answers_the_snapshot_alone():
    stdout = io.BytesIO()
    agent.serve(io.BytesIO(b"snapshot " + NONCE + b"\n"), stdout, SETTINGS)
    answer = bytearray(stdout.getvalue().split(b"\n", 1)[1])
    with pytest.raises(ObserverLost, match="garbled"):  # a look's framing needs the table's length
        _framed_parts(bytearray(answer), NONCE, True)
    body, table = _framed_parts(answer, NONCE, False)
    assert table == 0 and observe.parse_snapshot(body).failure is None


def test_a_table_over_its_cap_is_not_whole(tmp_path):
    for pid in (7, 8, 9):
        (tmp_path / str(pid)).mkdir()
        (tmp_path / str(pid) / "stat").write_bytes(b"%d (a b) S 1 " % pid + b"0 " * 17 + b"4242 0 0\n")
        (tmp_path / str(pid) / "cmdline").write_bytes(b"node\0server.js\0")
    (tmp_path / "self").mkdir()
    whole = agent.process_table(os.fsencode(tmp_path))
    assert parse_table(whole) == tuple((pid, 1, 4242, "node server.js") for pid in (7, 8, 9))
    assert parse_table(agent.process_table(os.fsencode(tmp_path), limit=len(whole) - 1)) is None
    (tmp_path / "8" / "cmdline").write_bytes(b"")  # a zombie's: no command line, its name in brackets
    assert (8, 1, 4242, "[a b]") in (parse_table(agent.process_table(os.fsencode(tmp_path))) or ())


# ---- the Watch: `top` only when the table changed -----------------------------------------------------------------

SNAP = Snapshot(taken_at=0.0, files={}, counters=observe.Counters())


@dataclass
class _Engine:
    """`top` of a sandbox whose processes the test sets (host pids); counts the calls."""

    rows: list[list[str]]
    tops: int = 0

    def top(self, _container: str, ps_args: str = "") -> dict[str, Any]:
        self.tops += 1
        return {"Titles": ["PID", "PPID", "CMD"], "Processes": [list(row) for row in self.rows]}


@dataclass
class _Client:
    api: _Engine


@dataclass
class _Observer:
    tables: list[Signature | None]
    host_pid: int | None = 900
    looks: int = 0
    closed: bool = field(default=False)

    def look(self) -> tuple[Snapshot, Signature | None]:
        self.looks += 1
        return SNAP, self.tables.pop(0)

    def close(self) -> None:
        self.closed = True


def _table(*pids: int) -> Signature:
    return tuple((pid, 1, 100 + pid, f"p{pid}") for pid in pids)


def _watch(engine: _Engine, tables: list[Signature | None]) -> Watch:
    return Watch(_Client(engine), "c", observer=_Observer(tables))  # type: ignore[arg-type]


def test_top_is_asked_again_only_when_the_observers_table_changed():
    engine = _Engine([["101", "1", "p1"], ["102", "1", "p2"]])
    watch = _watch(engine, [_table(1, 2), _table(1, 2), _table(1, 2), _table(1, 2, 3)])
    watch.snapshot()
    first = watch.processes()
    watch.snapshot()
    assert watch.processes() == first and engine.tops == 1  # the same processes: the same list, no engine call
    watch.snapshot()
    assert watch.processes() == first and engine.tops == 1
    engine.rows.append(["103", "102", "p3"])
    watch.snapshot()  # a third process: `top` again, and its new host pid is listed
    assert [p.pid for p in watch.processes()] == [101, 102, 103] and engine.tops == 2
    assert (watch.tops, watch.tops_saved) == (2, 2)


def test_a_top_that_saw_another_count_than_the_table_is_not_reused():
    # The table (2 processes) was taken, then a child was born before `top` listed 3: the next look's table can be
    # the same two while the child has ended, so that `top` is not the list for it.
    engine = _Engine([["101", "1", "p1"], ["102", "1", "p2"], ["150", "102", "sh -c true"]])
    watch = _watch(engine, [_table(1, 2), _table(1, 2)])
    watch.snapshot()
    assert len(watch.processes()) == 3
    engine.rows.pop()
    watch.snapshot()
    assert [p.pid for p in watch.processes()] == [101, 102] and engine.tops == 2


def test_no_reuse_without_a_new_look_nor_without_a_whole_table():
    engine = _Engine([["101", "1", "p1"]])
    watch = _watch(engine, [_table(1), None, None])
    watch.snapshot()
    watch.processes()
    watch.processes()  # no look since the last `top`: nothing says the processes are the same
    assert engine.tops == 2
    watch.snapshot()  # a table that was not whole (None) says nothing either
    watch.processes()
    assert engine.tops == 3


def test_after_the_observer_is_lost_every_list_is_a_top(monkeypatch):
    engine = _Engine([["101", "1", "p1"]])
    watch = _watch(engine, [_table(1)])

    def lost() -> tuple[Snapshot, Signature | None]:
        raise ObserverLost("the observer's stream ended")

    watch.snapshot()
    watch.processes()
    assert watch.observer is not None
    watch.observer.look = lost  # type: ignore[method-assign]
    watch.observer.exit_reason = lambda: "it exited with code 137"  # type: ignore[attr-defined]
    monkeypatch.setattr(observe, "snapshot", lambda _client, _container: SNAP)
    watch.snapshot()  # the loss: this look and every later one by exec, with no table
    watch.processes()
    watch.snapshot()
    watch.processes()
    assert engine.tops == 3 and watch.lost is not None and watch.by_exec == 2
