"""The sandbox names itself in /etc/hosts as a Debian machine does (127.0.1.1), so resolving its own host name asks
no DNS. Without that line (the engine writes none in network mode "none") mcp-server-git's git_checkout, writing
its reflog, looked up "gus-desktop" through the sink: B2 and B1 errors for a tool annotated openWorldHint: false
that reached no network at all."""

from __future__ import annotations

import pytest

from sandbox.core.session import SandboxSession
from sandbox.run import sink as egress
from sandbox.run.policy import OWN_NAME_ADDRESS, RunPolicy, own_name_hosts

SINK_ID = "0" * 64


class _Api:
    """Just enough of docker-py's API to build a host config."""

    def create_host_config(self, **settings):
        return settings


def test_a_strict_run_container_names_its_own_host() -> None:
    config = RunPolicy(hostname="gus-desktop").host_config(_Api())
    assert config["extra_hosts"] == {"gus-desktop": OWN_NAME_ADDRESS}


def test_near_miss_a_container_in_the_sinks_namespace_gets_no_entry_of_its_own() -> None:
    # the engine refuses host entries beside container:<id>; the container reads the sink's /etc/hosts
    config = RunPolicy(hostname="gus-desktop", network_mode=f"container:{SINK_ID}").host_config(_Api())
    assert config["extra_hosts"] is None
    assert own_name_hosts(None) is None and own_name_hosts("") is None


@pytest.mark.docker
def test_a_server_in_the_sinks_namespace_resolves_its_own_name_without_dns(docker_client, no_leftovers) -> None:
    session = SandboxSession(docker_client)
    try:
        sink = egress.launch_sink(session, hostname="lena-thinkpad").wait_ready()
        probe = session.create_container(
            "run", image="debian:trixie-slim", command=["getent", "ahosts", "lena-thinkpad"],
            host_config=docker_client.api.create_host_config(network_mode=f"container:{sink.container_id}"))
        docker_client.api.start(probe)
        assert docker_client.api.wait(probe, timeout=30)["StatusCode"] == 0
        assert docker_client.api.logs(probe).decode().split()[0] == OWN_NAME_ADDRESS
        assert not [event for event in sink.events(settled=True) if event.host == "lena-thinkpad"]
    finally:
        session.teardown()
