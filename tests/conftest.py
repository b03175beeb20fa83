"""Fixtures shared by the test suite. Tests marked `docker` use the real engine and real containers."""

from __future__ import annotations

import os

import pytest

from sandbox.core import labels
from tests.sandbox_helpers import labelled_containers


@pytest.fixture(scope="session", autouse=True)
def own_state_folder(tmp_path_factory: pytest.TempPathFactory):
    """The suite's own per-user state (the image cache's last uses, the reads kept of installed images), never the
    user's: no test takes a read that an earlier run, or another checkout's code, kept. The scans a test runs as
    subprocesses inherit it."""
    folder = tmp_path_factory.mktemp("mcp-sandbox-state")
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("MCP_SANDBOX_STATE_DIR", str(folder))
        yield folder


@pytest.fixture(scope="session")
def docker_client():
    from sandbox.core import engine

    return engine.connect()


@pytest.fixture
def no_leftovers(docker_client):
    """Fail the test if it leaves any labelled sandbox container behind. Containers of other scanner processes that
    are still running (a parallel scan) are theirs, not leftovers; ours, or those of our finished subprocesses, are."""
    before = {c["Id"] for c in labelled_containers(docker_client)}
    yield
    left = [c["Id"] for c in labelled_containers(docker_client)
            if c["Id"] not in before
            and (c["Labels"].get(labels.OWNER_PID) == str(os.getpid()) or not labels.owner_alive(c["Labels"]))]
    assert left == [], f"containers left behind: {left}"
