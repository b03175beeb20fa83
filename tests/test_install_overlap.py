"""The install's work that has no order runs at once: the install container starts while the proxy's squid and dnsmasq
boot (no step runs before they answer), and the install container, proxy and network are removed beside the scan's
next stages instead of before the install returns (the session's teardown still removes and verifies everything)."""

from __future__ import annotations

import json
import threading
import uuid

import pytest

from sandbox.core import images
from sandbox.core.session import SandboxSession
from sandbox.install import container as install
from sandbox.install import steps as install_steps
from sandbox.install.proxy import allowlist as proxy_allowlist
from sandbox.install.proxy import container as ie
from tests.sandbox_helpers import labelled_containers

REMOVAL_WAIT_SECONDS = 30.0  # how long a held removal waits for the install to return (the old order: never)


def _local_package(tmp_path):
    package = tmp_path / "overlap"
    package.mkdir()
    (package / "package.json").write_text(json.dumps({"name": "mcp-zoo-overlap", "version": "0.1.0",
                                                      "bin": {"mcp-zoo-overlap": "index.js"}}))
    (package / "index.js").write_text("#!/usr/bin/env node\n")
    return package


@pytest.mark.docker
def test_the_proxy_is_launched_unready_and_wait_ready_finishes_its_start(docker_client, no_leftovers):
    with SandboxSession(docker_client) as session:
        proxy = ie.launch_install_proxy(session, proxy_allowlist.registry_hosts("npm"))
        # Its address on the internal network is known at once (the install container needs it as its resolver) ...
        assert proxy.address and proxy.network
        assert not proxy.ready and proxy.start_seconds == 0.0
        proxy.wait_ready()
        # ... and wait_ready() is what start_install_proxy returned after: squid and dnsmasq answer, the network is
        # read back as internal.
        assert proxy.ready and proxy.start_seconds > 0.0
        logs = docker_client.api.logs(proxy.container_id, stdout=True, stderr=True).decode()
        assert "MCPEGRESS-READY" in logs
        assert docker_client.api.inspect_network(proxy.network)["Internal"] is True
        proxy.wait_ready()  # a second call checks nothing again
    assert session.teardown_result is not None and session.teardown_result.complete


@pytest.mark.docker
def test_the_install_overlaps_the_proxy_start_and_removes_its_containers_afterwards(docker_client, tmp_path,
                                                                                      monkeypatch, no_leftovers):
    runtime = images.ensure_runtime_image(docker_client, "node")
    request = install.InstallRequest("npm", "/opt/src/pkg", "mcp-zoo-overlap", f"test:{uuid.uuid4()}",
                                     local_path=_local_package(tmp_path))
    order: list[str] = []
    wait_ready = getattr(ie.InstallProxy, "wait_ready", lambda proxy: None)
    start, run = install_steps.StepRunner.start, install_steps.StepRunner.run

    def recorded(name, original):
        def call(*args, **kwargs):
            order.append(name)
            return original(*args, **kwargs)
        return call
    monkeypatch.setattr(ie.InstallProxy, "wait_ready", recorded("proxy ready", wait_ready), raising=False)
    monkeypatch.setattr(install_steps.StepRunner, "start", recorded("install container started", start))
    monkeypatch.setattr(install_steps.StepRunner, "run", recorded("step", run))
    returned = threading.Event()
    events: list[str] = []
    with SandboxSession(docker_client) as session:
        remove = session.remove_container

        def held_removal(container_id):  # a removal that waits for the install to have returned
            returned.wait(REMOVAL_WAIT_SECONDS)
            events.append("removal" if returned.is_set() else "removal before the install returned")
            remove(container_id)
        session.remove_container = held_removal  # type: ignore[method-assign]
        installed = install.install(session, request, runtime.tag, runtime.image_id, use_cache=False)
        returned.set()
        events.append("install returned")
        session_id = session.id
    try:
        # The container started before the proxy was ready; every step ran after it was.
        assert order[:2] == ["install container started", "proxy ready"], order
        assert order[2:] and set(order[2:]) == {"step"}, order
        # Nothing was removed before the install returned; the teardown then left nothing either.
        assert events[0] == "install returned" and "removal before the install returned" not in events, events
        assert session.teardown_result is not None and session.teardown_result.complete, session.teardown_result
        assert labelled_containers(docker_client, session_id) == []
        assert installed.version == "0.1.0" and "mcp-zoo-overlap" in installed.entry_points
    finally:
        docker_client.images.remove(installed.image, force=True)
