"""How the run phase waits for a server to exit once its stdin closed (sandbox/run/server.py `_wait_exit`): one
engine wait bounded by the grace, answered as the container stops; a wait the engine failed is asked again while
time is left; what no wait said is read from the container's state. The stand-in engine below plays each case the
docker-py client can raise; tests/test_sandbox_exhaustion.py ends real servers by EOF, SIGTERM and SIGKILL."""

from __future__ import annotations

from types import SimpleNamespace
from typing import Any

import pytest
import requests
from docker.errors import APIError, NotFound

from sandbox.run import server as run


class Engine:
    """Answers `wait` from a script of outcomes (a dict is the engine's answer, an exception is raised), and
    `inspect_container` with a fixed state."""

    def __init__(self, *outcomes: Any, running: bool = True, code: int = 0) -> None:
        self.outcomes = list(outcomes)
        self.waits: list[dict[str, Any]] = []
        self.inspected = 0
        self.running = running
        self.code = code

    def wait(self, container_id: str, timeout: float, condition: str) -> dict[str, Any]:
        self.waits.append({"id": container_id, "timeout": timeout, "condition": condition})
        outcome = self.outcomes.pop(0)
        if isinstance(outcome, BaseException):
            raise outcome
        return outcome

    def inspect_container(self, _container_id: str) -> dict[str, Any]:
        self.inspected += 1
        return {"State": {"Running": self.running, "ExitCode": self.code}}


def _session(engine: Engine) -> Any:
    return SimpleNamespace(client=SimpleNamespace(api=engine))


def test_one_wait_bounded_by_the_grace_returns_the_exit_code() -> None:
    engine = Engine({"StatusCode": 3, "Error": None})
    assert run._wait_exit(_session(engine), "c1", grace=2.0) == 3
    assert len(engine.waits) == 1 and engine.inspected == 0
    assert engine.waits[0]["condition"] == "not-running" and 1.9 < engine.waits[0]["timeout"] <= 2.0


def test_a_wait_that_outlasts_the_grace_reads_the_state_once(monkeypatch: pytest.MonkeyPatch) -> None:
    clock = [0.0]

    def timed_out(*_args: Any, **kwargs: Any) -> dict[str, Any]:
        clock[0] += kwargs["timeout"]  # the read timed out at the end of the grace
        raise requests.exceptions.ConnectionError("Read timed out.")

    monkeypatch.setattr(run.time, "monotonic", lambda: clock[0])
    engine = Engine(running=True)
    monkeypatch.setattr(engine, "wait", timed_out)
    assert run._wait_exit(_session(engine), "c1", grace=2.0) is None
    assert engine.inspected == 1 and clock[0] == pytest.approx(2.0)


def test_an_exit_just_at_the_deadline_is_still_read() -> None:
    engine = Engine(requests.exceptions.ConnectionError("Read timed out."), running=False, code=137)
    assert run._wait_exit(_session(engine), "c1", grace=0.0) == 137  # no time to wait: the state says it exited
    assert engine.waits == [] and engine.inspected == 1


def test_an_engine_error_with_time_left_is_waited_out_again(monkeypatch: pytest.MonkeyPatch) -> None:
    slept: list[float] = []
    monkeypatch.setattr(run.time, "sleep", slept.append)
    engine = Engine(APIError("500 Server Error"), requests.exceptions.ConnectionError("refused"), {"StatusCode": 0})
    assert run._wait_exit(_session(engine), "c1", grace=5.0) == 0
    assert len(engine.waits) == 3 and slept == [run.RETRY_SECONDS, run.RETRY_SECONDS]
    assert engine.waits[1]["timeout"] <= engine.waits[0]["timeout"]  # each wait gets what is left of the grace


def test_a_container_gone_has_no_exit_code() -> None:
    engine = Engine(NotFound("No such container: c1"))
    assert run._wait_exit(_session(engine), "c1", grace=5.0) is None
    assert len(engine.waits) == 1 and engine.inspected == 0


def test_an_answer_without_a_status_code_falls_back_to_the_state() -> None:
    engine = Engine({"Error": {"Message": "odd"}}, running=False, code=9)
    assert run._wait_exit(_session(engine), "c1", grace=5.0) == 9
    assert engine.inspected == 1
