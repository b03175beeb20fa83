"""The first probe call waits for the second listing's server (P10) to be gone: the scan's gate (`before_probes`)
runs beside the probes' start-up record, never after the first call is sent. Real engine, the zoo's server."""

from __future__ import annotations

import time
from typing import Any

import pytest

from scanner.pipeline import fresh_server
from scanner.pipeline.inventory import Timeouts
from scanner.pipeline.scan import ScanOptions, run_scan
from scanner.probes import runner
from sandbox.run.policy import RunPolicy
from tests.sandbox_helpers import ZOO


@pytest.mark.docker
def test_the_second_server_is_removed_before_the_first_probe_call_is_sent(monkeypatch: pytest.MonkeyPatch,
                                                                          no_leftovers: None) -> None:
    removed: list[float] = []
    sent: list[float] = []
    startup_began: list[float] = []
    remove, send, startup = fresh_server._remove, runner.send_call, runner.ProbeRunner._startup_record

    def slow_remove(session: Any, server: Any) -> None:
        time.sleep(0.5)  # a slow engine: the gate must hold the first call back, however long this takes
        remove(session, server)
        removed.append(time.monotonic())

    async def recorded_send(*args: Any, **kwargs: Any) -> Any:
        sent.append(time.monotonic())
        return await send(*args, **kwargs)

    async def recorded_startup(self: runner.ProbeRunner) -> None:
        if self.sandbox_index == 0:
            startup_began.append(time.monotonic())
        await startup(self)

    monkeypatch.setattr(fresh_server, "_remove", slow_remove)
    monkeypatch.setattr(runner, "send_call", recorded_send)
    monkeypatch.setattr(runner.ProbeRunner, "_startup_record", recorded_startup)
    report = run_scan(ScanOptions(target=str(ZOO), command="zoo-plain", policy=RunPolicy(),
                                  timeouts=Timeouts(startup=60)))
    assert report.status == "complete" and report.probes, report.errors
    assert len(removed) == 1 and sent and startup_began, (removed, sent, startup_began)
    assert removed[0] < sent[0]  # gone before the first call
    assert startup_began[0] < removed[0]  # the start-up record's looks ran beside the wait, not after it
