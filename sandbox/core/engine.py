"""Connecting to the Docker engine."""

from __future__ import annotations

import docker
from docker.errors import DockerException

from sandbox.core.errors import EngineUnavailable

ENGINE_TIMEOUT_SECONDS = 120


def connect(timeout: int = ENGINE_TIMEOUT_SECONDS) -> docker.DockerClient:
    """Return a client for the engine named by DOCKER_HOST (or the default socket), after checking it answers."""
    try:
        client = docker.from_env(timeout=timeout)
        client.ping()
    except DockerException as exc:
        raise EngineUnavailable(
            "no Docker engine answers (" + _first_line(str(exc)) + "); start Docker, or run `make engine` on a "
            "Debian/Ubuntu host as root to install and start one"
        ) from exc
    return client


def _first_line(text: str) -> str:
    return text.strip().splitlines()[0][:200] if text.strip() else "no detail"
