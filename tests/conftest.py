"""Fixtures shared by the test suite. Tests marked `docker` use the real engine and real containers."""

from __future__ import annotations

import pytest

from tests.sandbox_helpers import labelled_containers


@pytest.fixture(scope="session")
def docker_client():
    from sandbox import engine

    return engine.connect()


@pytest.fixture
def no_leftovers(docker_client):
    """Fail the test if it leaves any labelled sandbox container behind."""
    before = {c["Id"] for c in labelled_containers(docker_client)}
    yield
    after = {c["Id"] for c in labelled_containers(docker_client)}
    assert after - before == set(), f"containers left behind: {sorted(after - before)}"
