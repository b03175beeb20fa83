"""The looks after a probe call (scanner/probes/call_looks.py): the engine is not asked the exit state when the
sandbox's observer answered (its answer shows the sandbox running), it is asked when the observer was lost during
the look or when there is none, and a re-list runs beside the looks rather than after them. The live half (real
sandboxes, servers that stop after answering) is tests/test_precision_live.py and tests/test_observer_live.py."""

from __future__ import annotations

import threading
import time
from dataclasses import dataclass, field
from typing import Any

import anyio

from sandbox.run import observe
from sandbox.run.observe import Snapshot
from sandbox.run.observer import ObserverLost
from sandbox.run.observer_watch import Watch
from scanner.probes.call_looks import look_after_call

SNAP = Snapshot(taken_at=0.0, files={}, counters=observe.Counters())


@dataclass
class _Engine:
    """`inspect` and `top` of a sandbox; counts the inspects, and says the container stopped when `stopped`."""

    stopped: bool = False
    inspects: int = 0

    def inspect_container(self, _container: str) -> dict[str, Any]:
        self.inspects += 1
        if self.stopped:
            return {"State": {"Running": False, "ExitCode": 137, "OOMKilled": False}}
        return {"State": {"Running": True}}

    def top(self, _container: str, ps_args: str = "") -> dict[str, Any]:
        return {"Titles": ["PID", "PPID", "CMD"], "Processes": [["101", "1", "server"]]}


@dataclass
class _Client:
    api: _Engine


@dataclass
class _Observer:
    host_pid: int | None = 900
    delay: float = 0.0
    lost: bool = False
    answered: threading.Event = field(default_factory=threading.Event)

    def look(self) -> tuple[Snapshot, None]:
        time.sleep(self.delay)
        if self.lost:
            raise ObserverLost("the observer's stream ended")
        self.answered.set()
        return SNAP, None

    def exit_reason(self) -> str:
        return "it exited with code 137"

    def close(self) -> None:
        pass


def _looks(engine: _Engine, watch: Watch | None, relist: Any = None) -> Any:
    return anyio.run(lambda: look_after_call(_Client(engine), "c", None, watch, relist=relist))  # type: ignore[arg-type]


def test_an_answer_of_the_observer_is_the_running_state_without_an_inspect():
    engine = _Engine()
    looks = _looks(engine, Watch(_Client(engine), "c", observer=_Observer()))  # type: ignore[arg-type]
    assert looks.state.running and engine.inspects == 0 and looks.snapshot is SNAP


def test_near_miss_an_observer_lost_during_the_look_leaves_the_engine_to_say(monkeypatch):
    engine = _Engine(stopped=True)  # the server stopped the sandbox: the observer's stream ended with it
    monkeypatch.setattr(observe, "snapshot", lambda _client, _container: (_ for _ in ()).throw(
        observe.ObserveError("could not look into the sandbox: the container is not running")))
    watch = Watch(_Client(engine), "c", observer=_Observer(lost=True))  # type: ignore[arg-type]
    looks = _looks(engine, watch)
    assert not looks.state.running and looks.state.exit_code == 137 and engine.inspects == 1
    assert isinstance(looks.snapshot, observe.ObserveError) and watch.lost is not None


def test_near_miss_without_an_observer_the_engine_is_asked(monkeypatch):
    engine = _Engine()
    monkeypatch.setattr(observe, "snapshot", lambda _client, _container: SNAP)
    looks = _looks(engine, Watch(_Client(engine), "c", unavailable="the observer is turned off"))  # type: ignore[arg-type]
    assert looks.state.running and engine.inspects == 1


def test_the_re_list_runs_beside_the_looks_and_its_tools_come_back_with_them():
    engine = _Engine()
    observer = _Observer(delay=0.3)
    began: list[bool] = []

    async def fetch() -> list[dict[str, Any]]:
        began.append(observer.answered.is_set())  # the look is still under way when the re-list is sent
        return [{"name": "t"}]

    looks = _looks(engine, Watch(_Client(engine), "c", observer=observer), relist=fetch)  # type: ignore[arg-type]
    assert began == [False] and looks.tools == [{"name": "t"}]
    assert _looks(engine, Watch(_Client(engine), "c", observer=_Observer())).tools is None  # type: ignore[arg-type]


def test_cpu_burnt_while_no_call_ran_is_b6_named_after_the_call_it_began_in():
    from scanner.report.model import AFTER_LAST_CALL, CallBehavior, ResourceUse
    from scanner.rules.behavior import evaluate_behavior

    def record(call: int, tool: str | None, cpu: float, label: str = "generated") -> CallBehavior:
        return CallBehavior(call=call, tool=tool, label=label,
                            resources=ResourceUse(cpu_seconds=cpu, seconds=0.3))

    # the spinner starts as its call answers: that call's own window is quiet, the ones after it are busy
    quiet, spinner, later = record(0, "quiet", 0.01), record(1, "spin", 0.02), record(2, "other", 0.28)
    after = record(-1, None, 0.27, AFTER_LAST_CALL)
    found = [f for f in evaluate_behavior([], [], [quiet, spinner, later, after]) if f.rule_id == "B6"]
    assert [f.tool for f in found] == ["spin"] and "no call running" in found[0].message
    after.resources.cpu_seconds = 0.02  # near miss: the sandbox went quiet once the calls were done
    assert not [f for f in evaluate_behavior([], [], [quiet, spinner, later, after]) if f.rule_id == "B6"]


def test_a_spinner_the_machines_other_work_starves_is_still_b6_by_the_time_it_waited_for_a_cpu():
    """On a loaded machine (a busy CI runner, a batch worker) a spinning thread gets a small share of a CPU and waits
    out the rest on the run queue: the time used alone let it pass."""
    from scanner.report.model import AFTER_LAST_CALL, CallBehavior, ResourceUse
    from scanner.rules.behavior import evaluate_behavior

    def after(cpu: float, waited: float | None) -> CallBehavior:
        return CallBehavior(call=-1, tool=None, label=AFTER_LAST_CALL,
                            resources=ResourceUse(cpu_seconds=cpu, cpu_wait_seconds=waited, seconds=0.8))

    quiet = CallBehavior(call=0, tool="spin", label="generated", resources=ResourceUse(cpu_seconds=0.01, seconds=0.3))
    starved = [f for f in evaluate_behavior([], [], [quiet, after(0.12, 0.62)]) if f.rule_id == "B6"]
    assert [f.tool for f in starved] == ["spin"]
    assert "0.12 CPU-seconds (and waited 0.62 s more for a CPU the machine's other work held) in 0.80 s" in \
        starved[0].message
    # near misses: the same time used with little waiting (the server went quiet), and a look by exec (no wait read)
    assert not [f for f in evaluate_behavior([], [], [quiet, after(0.12, 0.05)]) if f.rule_id == "B6"]
    assert not [f for f in evaluate_behavior([], [], [quiet, after(0.12, None)]) if f.rule_id == "B6"]
    # a burst of honest work (the answer to the last re-list) on a crowded machine waits many times its length: it
    # used under a tenth of the quota itself, so its wait does not count
    assert not [f for f in evaluate_behavior([], [], [quiet, after(0.05, 0.6)]) if f.rule_id == "B6"]


def test_the_observer_counts_the_sandboxs_run_queue_wait_but_not_its_own_or_an_execs(tmp_path):
    """observer_agent.RunQueue over a /proc-like tree: a thread's wait since the look before, a new thread's whole
    wait; the processes the engine started (parent 0, not pid 1) left out; nothing readable: no line at all."""
    from sandbox.run import observer_agent as agent
    from sandbox.run.observe import parse_counters

    def task(pid: int, ppid: int, tid: int, waited: int, start: int = 500) -> None:
        (tmp_path / str(pid) / "task" / str(tid)).mkdir(parents=True, exist_ok=True)
        rest = " ".join(["S", str(ppid)] + ["0"] * 17 + [str(start)] + ["0"] * 5)
        (tmp_path / str(pid) / "stat").write_text(f"{pid} (a (b) c) {rest}\n")
        (tmp_path / str(pid) / "task" / str(tid) / "schedstat").write_text(f"900000 {waited} 7\n")

    assert agent.RunQueue(bytes(tmp_path)).line() == b""
    task(1, 0, 1, 1_000)  # init (docker-init): its parent is outside the namespace
    task(7, 1, 7, 2_000)  # the server
    task(7, 1, 8, 3_000)  # its thread
    task(40, 0, 40, 10**9)  # an exec: the observer itself
    waits = agent.RunQueue(bytes(tmp_path))
    assert waits.line() == b"runqueue-wait-ns 6000\n"
    task(7, 1, 8, 503_000)  # the thread waited half a millisecond more
    task(9, 7, 9, 40_000)  # a new child: all it waited counts
    task(40, 0, 40, 2 * 10**9)
    line = waits.line()
    assert line == b"runqueue-wait-ns 546000\n"
    assert parse_counters(line.decode()).wait_seconds == 0.000546
    assert parse_counters("/sys/fs/cgroup/cpuacct/cpuacct.usage 5 \n").wait_seconds is None  # the exec path
