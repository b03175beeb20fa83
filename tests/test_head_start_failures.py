"""Failures the head start's servers meet, in a real engine (scanner/pipeline/head_start.py, early_server.py,
fresh_server.py): P10's second server failing in a way nothing expected (an engine read timing out) costs the
relisting only, as it does when the scan starts that server itself, and leaves no container of it behind."""

from __future__ import annotations

import docker
import pytest
import requests

from sandbox.core import labels
from sandbox.run import seeding, server as run_server
from sandbox.run.policy import RunPolicy
from sandbox.run.server import RunningServer
from scanner.pipeline.head_start import HeadStart
from scanner.pipeline.scan import ScanOptions, run_scan
from scanner.pipeline.timeouts import Timeouts
from scanner.probes.options import ProbeOptions
from tests.sandbox_helpers import ZOO, labelled_containers


def _cached_zoo() -> ScanOptions:
    """The zoo's options (probes off), its install cached: the head start begins both servers."""
    options = ScanOptions(target=str(ZOO), command="zoo-plain", policy=RunPolicy(), timeouts=Timeouts(startup=60),
                          probes=ProbeOptions(enabled=False))
    assert run_scan(options).status == "complete"
    return options


@pytest.mark.docker
def test_a_second_server_failing_unexpectedly_in_the_head_start_costs_only_the_relisting(
        monkeypatch: pytest.MonkeyPatch, no_leftovers: None) -> None:
    """`start_server` starts only the fresh servers (the second listing's, the conformance probe's): its engine
    timing out no longer throws the first server away and fails the scan as the install's (0 tools)."""
    options = _cached_zoo()

    def timed_out(*_: object, **__: object) -> RunningServer:
        raise requests.exceptions.ReadTimeout("the engine did not answer in time")
    monkeypatch.setattr(run_server, "start_server", timed_out)
    with HeadStart(observe=True, hostname=options.policy.hostname, options=options) as early:
        assert early.server is not None
        begun = early.server.result()  # the first server began all the same
        assert begun is not None and begun.started is not None and begun.second is not None
        assert isinstance(begun.second.problem, requests.exceptions.ReadTimeout)
        report = run_scan(options, head_start=early)
    assert report.tools and report.install is not None and report.install.cached
    assert len(report.errors) == 1 and "relisting" in report.errors[0] and "ReadTimeout" in report.errors[0], \
        report.errors
    assert report.sandbox is not None and report.sandbox.teardown is not None and report.sandbox.teardown.complete


@pytest.mark.docker
def test_a_second_server_whose_seeding_fails_unexpectedly_is_removed_and_its_attach_closed(
        monkeypatch: pytest.MonkeyPatch, docker_client: docker.DockerClient, no_leftovers: None) -> None:
    options = _cached_zoo()
    seeded: list[str] = []
    closed: list[str] = []
    close_attach = run_server.close_attach

    def fill(_client: object, container_id: str, *_: object, **__: object) -> None:
        seeded.append(container_id)  # only the fresh servers are filled (probes off: the first is not seeded)
        raise requests.exceptions.ConnectionError("the engine went away mid-copy")

    def closing(server: RunningServer) -> None:
        closed.append(server.container_id)
        close_attach(server)
    monkeypatch.setattr(seeding, "fill", fill)
    monkeypatch.setattr(run_server, "close_attach", closing)
    with HeadStart(observe=True, hostname=options.policy.hostname, options=options) as early:
        assert early.server is not None
        begun = early.server.result()
        assert begun is not None and begun.started is not None and begun.second is not None
        assert begun.second.server is None and isinstance(begun.second.problem, requests.exceptions.ConnectionError)
        assert len(seeded) == 1 and seeded == closed  # the second server's attach closed
        with pytest.raises(docker.errors.NotFound):
            docker_client.api.inspect_container(seeded[0])  # and its container removed there and then
        session = docker_client.api.inspect_container(begun.started.server.container_id)["Config"]["Labels"][
            labels.SESSION]
        assert len(labelled_containers(docker_client, session)) == 2  # the sink and the first server


@pytest.mark.docker
def test_a_scan_that_fails_before_serving_the_begun_servers_closes_their_attaches(
        monkeypatch: pytest.MonkeyPatch, no_leftovers: None) -> None:
    """The scan took the session and its servers, then failed before it served them (the gc sweep beside the install
    raised): closing the head start closes their attach sockets and the seeded server's observer, which nothing else
    would (the teardown removed their containers; the sockets stayed open until collected)."""
    from sandbox.core import gc

    options = _cached_zoo()
    options = ScanOptions(target=options.target, command=options.command, policy=options.policy,
                          timeouts=options.timeouts, probes=ProbeOptions(timeout=2.0))  # seeded: an observer runs
    assert run_scan(options).status == "complete"

    closed: list[str] = []
    close_attach = run_server.close_attach

    def closing(server: RunningServer) -> None:  # the socket's descriptor itself may stay open until docker-py's
        closed.append(server.container_id)  # wrapper of it is collected: the call is what is looked for
        close_attach(server)

    def sweep_fails(_client: object) -> None:
        raise RuntimeError("the sweep failed")
    monkeypatch.setattr(gc, "sweep", sweep_fails)
    monkeypatch.setattr(run_server, "close_attach", closing)
    with HeadStart(observe=True, hostname=options.policy.hostname, options=options) as early:
        assert early.server is not None
        begun = early.server.result()
        assert begun is not None and begun.started is not None and begun.second is not None
        assert begun.second.server is not None and begun.started.seeded is not None
        watch = begun.started.seeded.watch
        assert watch is not None and watch.observer is not None
        report = run_scan(options, head_start=early)
        assert report.errors == ["internal error in install: RuntimeError: the sweep failed"], report.errors
    assert sorted(closed) == sorted([begun.started.server.container_id, begun.second.server.container_id]), closed
    assert watch.observer is None
    assert report.sandbox is not None and report.sandbox.teardown is not None and report.sandbox.teardown.complete
