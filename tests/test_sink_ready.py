"""How the scan waits for the egress sink's listeners (sandbox/run/sink.py `_wait_ready`): the `ready` line is read
off one follow stream of the sink's log as the engine writes it. Pure: the line reader over chunks; real engine:
a sink that is ready, a container that exits before it is, and one that never is."""

from __future__ import annotations

import json
import time

import pytest

from sandbox.core.errors import SandboxError
from sandbox.core.session import SandboxSession
from sandbox.run import sink as egress

READY = json.dumps({"kind": "ready", "uid": 10003}).encode()


def test_the_ready_line_is_found_across_chunks_after_other_lines() -> None:
    chunks = [b'{"kind": "start"}\n{"kind": "rea', b'dy", "uid": 10003}', b"\n", b'{"kind": "dns"}\n']
    assert egress._ready_line(iter(chunks)) == {"kind": "ready", "uid": 10003}


def test_a_last_ready_line_without_its_newline_still_counts() -> None:
    assert egress._ready_line(iter([b"noise\n", READY])) == {"kind": "ready", "uid": 10003}


def test_lines_that_are_not_ready_or_not_json_are_none() -> None:
    chunks = [b'{"kind": "dns"}\n', b"not json\n", b'{"kind": "readyish"}\n', b'["ready"]\n']
    assert egress._ready_line(iter(chunks)) is None


def test_an_endless_unfinished_line_stops_the_read(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(egress, "READY_SCAN_BYTES", 1_000)
    consumed: list[int] = []

    def endless():
        while True:
            consumed.append(1)
            yield b"x" * 100

    assert egress._ready_line(endless()) is None
    assert len(consumed) == 11  # stopped once the unfinished line passed the bound


@pytest.mark.docker
def test_a_started_sink_is_ready_with_its_privileges_dropped(docker_client, no_leftovers) -> None:
    session = SandboxSession(docker_client)
    try:
        launched = egress.launch_sink(session, hostname="lena-thinkpad")
        sink = launched.wait_ready()
        assert sink.ready["kind"] == "ready" and sink.ready["uid"] == egress.SINK_UID
    finally:
        session.teardown()


@pytest.fixture
def started(docker_client, no_leftovers):
    """A session torn down after the test, and a starter of plain containers in the sink's role: (session, start)."""
    session = SandboxSession(docker_client)

    def start(script: str) -> str:
        container = session.create_container(egress.SINK_ROLE, image="debian:trixie-slim", command=["sh", "-c", script])
        docker_client.api.start(container)
        return container

    try:
        yield session, start
    finally:
        session.teardown()


@pytest.mark.docker
def test_a_container_that_exits_before_ready_says_so_with_its_stderr(started) -> None:
    session, start = started
    container = start("echo not-ready; echo listener failed >&2; exit 3")
    with pytest.raises(SandboxError, match=r"exited \(3\) before it was ready: listener failed"):
        egress._wait_ready(session, container, timeout=20.0)


@pytest.mark.docker
def test_a_container_that_never_gets_ready_times_out_at_the_deadline(started) -> None:
    session, start = started
    container = start("echo starting; sleep 60")
    began = time.monotonic()
    with pytest.raises(SandboxError, match="not ready after 1 s"):
        egress._wait_ready(session, container, timeout=1.0)
    assert 0.9 < time.monotonic() - began < 10
