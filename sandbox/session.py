"""A sandbox session: every container it creates is labelled and tracked, and teardown removes them all, verified."""

from __future__ import annotations

import time
import uuid
from dataclasses import dataclass, field
from typing import Any

import docker
from docker.errors import APIError, NotFound

from sandbox import labels


@dataclass
class TeardownResult:
    complete: bool
    seconds: float
    removed: list[str] = field(default_factory=list)
    leftovers: list[str] = field(default_factory=list)


class SandboxSession:
    """Owns the containers of one scan. Use as a context manager, or call teardown() in a finally block."""

    def __init__(self, client: docker.DockerClient, session_id: str | None = None) -> None:
        self.client = client
        self.id = session_id or uuid.uuid4().hex
        self._containers: list[str] = []
        self.teardown_result: TeardownResult | None = None

    def labels(self, role: str) -> dict[str, str]:
        return labels.session_labels(self.id, role)

    def name(self, role: str) -> str:
        return f"mcp-sandbox-{self.id[:12]}-{role}-{len(self._containers)}"

    def create_container(self, role: str, **kwargs: Any) -> str:
        """Create a labelled container through the low-level API and track it; returns its id."""
        created = self.client.api.create_container(labels=self.labels(role), name=self.name(role), **kwargs)
        container_id = str(created["Id"])
        self._containers.append(container_id)
        return container_id

    def remove_container(self, container_id: str) -> None:
        """Kill and remove one tracked container now (e.g. a crashed server before a restart)."""
        _force_remove(self.client, container_id)
        if not _exists(self.client, container_id):
            self._containers = [c for c in self._containers if c != container_id]

    def teardown(self) -> TeardownResult:
        """Kill and remove every container of the session, then also sweep by label, and verify nothing is left."""
        started = time.monotonic()
        removed: list[str] = []
        for container_id in list(self._containers):
            _force_remove(self.client, container_id)
            removed.append(container_id[:12])
        for container in self._labelled_containers():
            _force_remove(self.client, container)
            if container[:12] not in removed:
                removed.append(container[:12])
        leftovers = [c[:12] for c in self._containers if _exists(self.client, c)] + [
            c[:12] for c in self._labelled_containers()
        ]
        self._containers = []
        self.teardown_result = TeardownResult(
            complete=not leftovers, seconds=round(time.monotonic() - started, 3), removed=removed,
            leftovers=sorted(set(leftovers)),
        )
        return self.teardown_result

    def _labelled_containers(self) -> list[str]:
        found = self.client.api.containers(all=True, quiet=True, filters={"label": f"{labels.SESSION}={self.id}"})
        return [str(c["Id"]) for c in found]

    def __enter__(self) -> SandboxSession:
        return self

    def __exit__(self, *exc: object) -> None:
        if self.teardown_result is None:
            self.teardown()


def _force_remove(client: docker.DockerClient, container_id: str) -> None:
    try:
        client.api.remove_container(container_id, force=True, v=True)
    except NotFound:
        return
    except APIError as exc:
        if exc.status_code == 409:  # removal already in progress
            _wait_gone(client, container_id, 10.0)
            return
        raise


def _exists(client: docker.DockerClient, container_id: str) -> bool:
    try:
        client.api.inspect_container(container_id)
    except NotFound:
        return False
    return True


def _wait_gone(client: docker.DockerClient, container_id: str, timeout: float) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline and _exists(client, container_id):
        time.sleep(0.1)
