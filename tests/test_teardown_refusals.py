"""An engine that refuses to remove one container (a 500: "device or resource busy" unmounting its layer) does not
stop teardown: it asks again, removes every other container and the networks, and reports the one it could not
remove, with the engine's words, as a leftover; an interrupted scan's last line says so. Real containers; the
refusal is injected in front of the engine."""

from __future__ import annotations

import time
from collections.abc import Callable, Iterator
from concurrent.futures import ThreadPoolExecutor
from typing import Any

import pytest
from docker.errors import APIError, NotFound

from sandbox.core import images
from sandbox.core.engine import EngineTimeout
from sandbox.core.session import REMOVAL_ATTEMPTS, SandboxSession
from scanner.pipeline.assemble import ScanParts
from scanner.pipeline.interrupts import ScanInterrupted, interrupted_line
from scanner.pipeline.phase_clock import PhaseClock
from scanner.pipeline.scan import Concurrent, in_session
from scanner.pipeline.targets import parse_target
from tests.sandbox_helpers import labelled_containers

pytestmark = pytest.mark.docker

BUSY = ("driver \"overlay2\" failed to remove root filesystem: unlinkat /var/lib/docker/overlay2/x: "
        "device or resource busy")


class _Refusing:
    """The engine's remove_container, refusing `times` removals of one container first."""

    def __init__(self, remove: Callable[..., Any], victim: str, times: int,
                 error: Callable[[], Exception] = lambda: APIError("500 Server Error", explanation=BUSY)) -> None:
        self.remove, self.victim, self.left, self.error = remove, victim, times, error
        self.asked = 0

    def __call__(self, container_id: str, **kwargs: Any) -> None:
        if container_id == self.victim:
            self.asked += 1
            if self.left > 0:
                self.left -= 1
                raise self.error()
        self.remove(container_id, **kwargs)


@pytest.fixture
def session(docker_client, no_leftovers) -> Iterator[tuple[SandboxSession, list[str], str]]:
    image = images.ensure_runtime_image(docker_client, "python").tag
    session = SandboxSession(docker_client)
    network = session.create_network("run")
    config = docker_client.api.create_host_config(network_mode=network)
    containers = [session.create_container(role, image=image, command=["sleep", "120"], user="10001:10001",
                                           host_config=config) for role in ("sink", "run", "relist")]
    for container in containers:
        docker_client.api.start(container)
    yield session, containers, network
    for container in containers:  # what a test's refusal left: removed for real
        try:
            docker_client.api.remove_container(container, force=True)
        except NotFound:
            pass
    session.teardown()


def _patched(monkeypatch: pytest.MonkeyPatch, docker_client, refusing: _Refusing) -> None:
    monkeypatch.setattr(docker_client.api, "remove_container", refusing)


def test_a_refusal_that_passes_is_asked_again_and_teardown_completes(docker_client, session, monkeypatch) -> None:
    sandbox, containers, network = session
    refusing = _Refusing(docker_client.api.remove_container, containers[1], times=REMOVAL_ATTEMPTS - 1)
    _patched(monkeypatch, docker_client, refusing)
    result = sandbox.teardown()
    assert result.complete and result.leftovers == []
    assert refusing.asked == REMOVAL_ATTEMPTS
    assert sorted(result.removed) == sorted([c[:12] for c in containers] + [network])
    assert labelled_containers(docker_client, sandbox.id) == []


def test_a_lasting_refusal_is_a_leftover_and_the_rest_is_still_removed(docker_client, session, monkeypatch) -> None:
    sandbox, containers, network = session
    refusing = _Refusing(docker_client.api.remove_container, containers[0], times=100)
    _patched(monkeypatch, docker_client, refusing)
    result = sandbox.teardown()
    assert not result.complete and refusing.asked == REMOVAL_ATTEMPTS  # asked again, not endlessly
    assert result.leftovers == [f"{containers[0][:12]} (the engine refused to remove it: {BUSY})"]
    assert [c["Id"] for c in labelled_containers(docker_client, sandbox.id)] == [containers[0]]
    assert sorted(result.removed) == sorted([c[:12] for c in containers[1:]] + [network])
    assert docker_client.api.networks(names=[network]) == []  # disconnected from the refused one, and removed


@pytest.mark.parametrize("status", [500, 403])
def test_a_network_the_engine_will_not_remove_is_a_leftover_not_removed(docker_client, session, monkeypatch,
                                                                         status: int) -> None:
    """Before the fix a refusal other than "in use" (a 500) raised out of teardown: the networks after it were not
    asked and the scan's teardown became an internal error instead of its leftovers; and a lasting "in use" (403)
    was put in `removed` all the same: the report's sandbox section said the network was removed and left over."""
    sandbox, containers, network = session
    remove_network = docker_client.api.remove_network

    def refuse(name: str) -> None:
        response = type("Response", (), {"status_code": status, "reason": "refused"})()
        raise APIError("refused", response=response, explanation="error while removing network: refused")

    monkeypatch.setattr(docker_client.api, "remove_network", refuse)
    result = sandbox.teardown()
    assert not result.complete and result.leftovers == [network]
    assert network not in result.removed
    assert sorted(result.removed) == sorted(c[:12] for c in containers)
    monkeypatch.undo()
    remove_network(network)


def test_an_engine_that_stops_answering_is_not_asked_again(docker_client, session, monkeypatch) -> None:
    sandbox, containers, _network = session
    refusing = _Refusing(docker_client.api.remove_container, containers[2], times=100,
                         error=lambda: EngineTimeout("the engine did not answer DELETE /containers/{id} within 60 s"))
    _patched(monkeypatch, docker_client, refusing)
    result = sandbox.teardown()
    assert not result.complete and refusing.asked == 1
    assert any(leftover.startswith("unverified: the engine did not answer") for leftover in result.leftovers)


def _interrupted_scan(docker_client, monkeypatch, *, refuse: bool) -> ScanInterrupted:
    """A scan's session interrupted (Ctrl-C) while its server container runs; the engine refusing, with `refuse`,
    to remove that container."""
    image = images.ensure_runtime_image(docker_client, "python").tag
    parts = ScanParts(target=parse_target("pypi:mcp-server-time"), probes_enabled=False, clock=PhaseClock())
    refusing = _Refusing(docker_client.api.remove_container, "", times=100 if refuse else 0)
    monkeypatch.setattr(docker_client.api, "remove_container", refusing)

    def stages(session: SandboxSession, _running: Concurrent) -> None:
        refusing.victim = session.create_container("run", image=image, command=["sleep", "120"], user="10001:10001")
        docker_client.api.start(refusing.victim)
        raise KeyboardInterrupt

    with ThreadPoolExecutor(max_workers=4) as pool, pytest.raises(ScanInterrupted) as caught:
        in_session(parts, docker_client, pool, time.monotonic(), stages)
    monkeypatch.undo()
    if refuse:
        docker_client.api.remove_container(refusing.victim, force=True)
    return caught.value


def test_an_interrupted_scan_says_what_its_teardown_left(docker_client, no_leftovers, monkeypatch) -> None:
    interrupt = _interrupted_scan(docker_client, monkeypatch, refuse=True)
    assert interrupt.left is not None and len(interrupt.left) == 1
    assert interrupt.left[0].endswith(f"(the engine refused to remove it: {BUSY})")
    assert interrupted_line(interrupt.left).startswith("interrupted; the sandbox was not fully torn down: left ")


def test_the_near_miss_an_interrupted_scan_torn_down_whole_says_so(docker_client, no_leftovers, monkeypatch) -> None:
    interrupt = _interrupted_scan(docker_client, monkeypatch, refuse=False)
    assert interrupt.left == []
    assert interrupted_line(interrupt.left) == "interrupted; the sandbox was torn down"
