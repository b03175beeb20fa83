"""How the run phase waits for a server to exit once its stdin closed (sandbox/run/server.py `_wait_exit`): it looks
again soon after the step and then less often, never past the grace, and returns the exit code the engine reports
(no Docker: an engine stand-in that reports the container running for a number of looks)."""

from __future__ import annotations

from types import SimpleNamespace
from typing import Any

import pytest

from sandbox.run import server as run


class Engine:
    def __init__(self, running_looks: int, code: int = 0) -> None:
        self.looks = 0
        self.running_looks = running_looks
        self.code = code

    def inspect_container(self, _container_id: str) -> dict[str, Any]:
        self.looks += 1
        return {"State": {"Running": self.looks <= self.running_looks, "ExitCode": self.code}}


def _session(engine: Engine) -> Any:
    return SimpleNamespace(client=SimpleNamespace(api=engine))


def test_the_first_looks_come_soon_then_at_most_every_poll(monkeypatch: pytest.MonkeyPatch) -> None:
    slept: list[float] = []
    monkeypatch.setattr(run.time, "sleep", slept.append)
    engine = Engine(running_looks=8, code=3)
    assert run._wait_exit(_session(engine), "c1", grace=60.0) == 3
    assert engine.looks == 9 and len(slept) == 8
    assert slept[0] <= 0.02 and sum(slept[:3]) < run.POLL_SECONDS  # three looks within the old first interval
    assert slept == sorted(slept) and max(slept) <= run.POLL_SECONDS


def test_a_server_still_running_after_the_grace_is_none(monkeypatch: pytest.MonkeyPatch) -> None:
    clock = [0.0]

    def sleep(seconds: float) -> None:
        assert seconds >= 0
        clock[0] += seconds

    monkeypatch.setattr(run.time, "sleep", sleep)
    monkeypatch.setattr(run.time, "monotonic", lambda: clock[0])
    assert run._wait_exit(_session(Engine(running_looks=10_000)), "c1", grace=2.05) is None
    assert clock[0] == pytest.approx(2.05)  # the last sleep ends at the deadline, not a poll past it
