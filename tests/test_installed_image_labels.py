"""An installed image carries no session: `docker commit` keeps the install container's labels, so before the fix
the image named the install's session and its long-dead owner, and any container run from it by hand (a user's
`docker run`, the benchmark's bare run) was removed by the next scan's gc sweep as a dead scan's leftover."""

from __future__ import annotations

import subprocess
import uuid
from pathlib import Path

import pytest

from sandbox.core import gc, images, labels
from sandbox.core.session import name_prefix
from sandbox.install.container import _commit
from sandbox.install.request import InstallRequest

pytestmark = pytest.mark.docker


def _dead_owner_labels(session_id: str) -> dict[str, str]:
    """The labels of a session whose scanner has exited (a real pid, reaped: its start time no longer matches)."""
    child = subprocess.Popen(["true"])
    child.wait()
    return {**labels.session_labels(session_id, "install"), labels.OWNER_PID: str(child.pid),
            labels.OWNER_PID_START: "1"}


def test_a_container_run_by_hand_from_an_installed_image_survives_gc(docker_client) -> None:
    api = docker_client.api
    runtime = images.image_tag("python")
    session_id = f"test-{uuid.uuid4().hex}"
    tag = f"mcp-sandbox-test-installed:{uuid.uuid4().hex[:12]}"
    source = api.create_container(runtime, command=["/bin/true"], labels=_dead_owner_labels(session_id),
                                  name=f"{name_prefix(session_id)}install-0")["Id"]
    by_hand = None
    try:
        request = InstallRequest(ecosystem="pypi", spec="zoo==1.0", name="zoo", identity="zoo==1.0",
                                 local_path=Path("/nonexistent"))
        image_id = _commit(docker_client, source, tag, request, {"version": "1.0"})
        image_labels = api.inspect_image(image_id)["Config"]["Labels"]
        assert image_labels[labels.SESSION] == "" and image_labels[labels.OWNER_PID] == ""
        assert image_labels[labels.KIND] == labels.KIND_INSTALLED  # still found as a cached install
        # What `docker run IMAGE` does: no labels of its own, so the container gets the image's.
        by_hand = api.create_container(tag, command=["/bin/true"])["Id"]
        swept = gc.sweep(docker_client)
        assert by_hand[:12] not in swept.containers
        assert api.inspect_container(by_hand)["Id"] == by_hand
        assert source[:12] in swept.containers  # the dead session's own container is still swept
    finally:
        for container in (by_hand, source):
            if container is not None:
                subprocess.run(["docker", "rm", "-f", container], capture_output=True, check=False)
        subprocess.run(["docker", "rmi", "-f", tag], capture_output=True, check=False)
