"""An interrupted scan does not wait out its threads' own timeouts: `in_session` halts the session on Ctrl-C (or
SIGTERM/SIGHUP, delivered as one), which kills the running containers a thread may be waiting on (the second
listing's server, a read) and refuses every later container; teardown still removes and verifies."""

from __future__ import annotations

import time
from concurrent.futures import Future, ThreadPoolExecutor
from typing import Any

import docker
import pytest

from sandbox.core import images
from sandbox.core.session import SandboxSession, SessionEnding
from scanner.pipeline.assemble import ScanParts
from scanner.pipeline.phase_clock import PhaseClock
from scanner.pipeline.scan import Concurrent, in_session
from scanner.pipeline.targets import parse_target
from tests.sandbox_helpers import labelled_containers


class _Api:
    def __init__(self) -> None:
        self.killed: list[str] = []
        self.created = 0

    def create_container(self, **_: Any) -> dict[str, str]:
        self.created += 1
        return {"Id": f"c{self.created}"}

    def kill(self, container_id: str) -> None:
        self.killed.append(container_id)


class _Client:
    def __init__(self) -> None:
        self.api = _Api()


def test_a_halted_session_kills_its_containers_and_creates_no_more() -> None:
    client = _Client()
    session = SandboxSession(client)  # type: ignore[arg-type]
    session.create_container("sink", image="i")
    session.create_container("run", image="i")
    session.halt()
    assert client.api.killed == ["c1", "c2"]
    with pytest.raises(SessionEnding, match="the scan is ending"):
        session.create_container("run", image="i")
    assert client.api.created == 2


def test_a_session_not_halted_creates_as_before() -> None:
    client = _Client()
    session = SandboxSession(client)  # type: ignore[arg-type]
    session.create_container("run", image="i")
    session.create_container("run", image="i")
    assert client.api.created == 2 and client.api.killed == []


def _interrupted_while_waiting(docker_client: docker.DockerClient, interrupt: BaseException
                               ) -> tuple[ScanParts, Future[Any]]:
    """A scan whose stage starts a container, has a thread wait on its exit, then ends by `interrupt`: the scan's
    parts and the waiting thread's future."""
    image = images.ensure_runtime_image(docker_client, "python").tag
    parts = ScanParts(target=parse_target("pypi:mcp-server-time"), probes_enabled=False, clock=PhaseClock())
    waiting: list[Future[Any]] = []

    def stages(session: SandboxSession, running: Concurrent) -> None:
        container = session.create_container("run", image=image, command=["sleep", "120"], user="10001:10001")
        session.client.api.start(container)
        # as the second listing's thread waits on its server's handshake: here, on the container's exit
        running.relisting = running.pool.submit(session.client.api.wait, container, timeout=150)
        waiting.append(running.relisting)
        time.sleep(0.5)
        raise interrupt

    with ThreadPoolExecutor(max_workers=4) as pool, pytest.raises(KeyboardInterrupt):
        in_session(parts, docker_client, pool, time.monotonic(), stages)
    return parts, waiting[0]


@pytest.mark.docker
def test_an_interrupt_wakes_a_thread_waiting_on_the_sandbox(docker_client: docker.DockerClient) -> None:
    parts, waiting = _interrupted_while_waiting(docker_client, KeyboardInterrupt())
    assert waiting.done() and waiting.result()["StatusCode"] == 137  # killed, not slept out (0)
    assert parts.teardown is not None and parts.teardown.complete
    assert labelled_containers(docker_client, parts.session or "") == []


def _wrapped_by_cpython(raised: BaseException) -> RuntimeError:
    """What CPython 3.11 raises when a descriptor's `__set_name__` raises while a class is made (a dataclass field's,
    as a module imports): a RuntimeError caused by it."""
    class Field:
        def __set_name__(self, owner: type, name: str) -> None:
            raise raised

    try:
        type("Settings", (), {"environment": Field()})
    except RuntimeError as exc:
        return exc
    raise AssertionError("not wrapped")  # Python 3.12 adds a note instead: this helper then says so


@pytest.mark.docker
def test_a_ctrl_c_cpython_wrapped_in_another_error_still_ends_the_scan_as_an_interrupt(
        docker_client: docker.DockerClient) -> None:
    parts, waiting = _interrupted_while_waiting(docker_client, _wrapped_by_cpython(KeyboardInterrupt()))
    assert parts.failure is None  # not a stage's failure
    assert waiting.done() and waiting.result()["StatusCode"] == 137  # halted: killed, not slept out
    assert parts.teardown is not None and parts.teardown.complete


@pytest.mark.docker
def test_the_near_miss_the_same_error_caused_by_a_bug_is_the_stages_failure(
        docker_client: docker.DockerClient) -> None:
    parts = ScanParts(target=parse_target("pypi:mcp-server-time"), probes_enabled=False, clock=PhaseClock())

    def stages(_session: SandboxSession, _running: Concurrent) -> None:
        raise _wrapped_by_cpython(ValueError("a bug"))

    with ThreadPoolExecutor(max_workers=4) as pool:
        in_session(parts, docker_client, pool, time.monotonic(), stages)
    assert parts.failure is not None and "Error calling __set_name__" in parts.failure.error
    assert parts.teardown is not None and parts.teardown.complete
