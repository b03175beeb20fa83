"""Streaming a tar into a container whose server died: the engine keeps the exec's socket open, so the writer and
the reader ask whether the exec still runs instead of waiting out the whole seed timeout (it used to take 60 s)."""

from __future__ import annotations

import socket
import time

import pytest

from sandbox.run.exec_stream import ObserveError, _drain_exec, _send_to_exec


class FakeApi:
    def __init__(self, running: bool) -> None:
        self.running = running
        self.asked = 0

    def exec_inspect(self, exec_id: str) -> dict[str, object]:
        self.asked += 1
        return {"Running": self.running}


def test_a_write_nobody_reads_stops_as_soon_as_the_exec_has_ended() -> None:
    ours, theirs = socket.socketpair()  # `theirs` never reads: a dead container's stdin
    api = FakeApi(running=False)
    started = time.monotonic()
    with pytest.raises(ObserveError, match="stopped reading"):
        _send_to_exec(api, "x", ours, b"\0" * 50_000_000, time.monotonic() + 60)
    assert api.asked >= 1 and time.monotonic() - started < 10
    ours.close(), theirs.close()


def test_a_slow_reader_that_still_runs_is_waited_for_until_the_deadline() -> None:
    """The near miss: an exec that is still running is not given up on at the first slow write."""
    ours, theirs = socket.socketpair()
    api = FakeApi(running=True)
    with pytest.raises(TimeoutError):
        _send_to_exec(api, "x", ours, b"\0" * 50_000_000, time.monotonic() + 1.0)
    assert api.asked >= 2  # asked more than once: it kept waiting while the exec ran
    ours.close(), theirs.close()


def test_a_silent_socket_ends_when_the_exec_has_ended_and_keeps_what_came() -> None:
    ours, theirs = socket.socketpair()
    theirs.sendall(b"tar: done")  # then silence, the socket left open
    output = bytearray()
    _drain_exec(FakeApi(running=False), "x", ours, output, time.monotonic() + 60)
    assert bytes(output) == b"tar: done"
    ours.close(), theirs.close()
