"""Sweep what dead scanner sessions left behind: containers, networks and volumes labelled with a session."""

from __future__ import annotations

from dataclasses import dataclass, field

import docker
from docker.errors import APIError, NotFound

from sandbox.core import labels


@dataclass
class SweepResult:
    containers: list[str] = field(default_factory=list)
    networks: list[str] = field(default_factory=list)
    volumes: list[str] = field(default_factory=list)
    kept_live_sessions: set[str] = field(default_factory=set)

    @property
    def total(self) -> int:
        return len(self.containers) + len(self.networks) + len(self.volumes)


def sweep(client: docker.DockerClient, *, everything: bool = False, keep_session: str | None = None) -> SweepResult:
    """Remove labelled resources whose scanner is gone (`everything`: all labelled, live or not, except keep_session).
    Cached installs are not touched here: `gc --images` evicts them through sandbox/core/image_cache.py."""
    result = SweepResult()
    api = client.api
    session_filter = {"label": labels.SESSION}

    def stale(resource_labels: dict[str, str] | None) -> bool:
        resource_labels = resource_labels or {}
        session = resource_labels.get(labels.SESSION, "")
        if not session or session == keep_session:
            return False  # an empty session label is no session's (a container run by hand from an installed image)
        if everything or not labels.owner_alive(resource_labels):
            return True
        result.kept_live_sessions.add(session)
        return False

    for container in api.containers(all=True, filters=session_filter):
        if stale(container.get("Labels")):
            _ignore_gone(lambda: api.remove_container(container["Id"], force=True, v=True))
            result.containers.append(container["Id"][:12])
    # Networks after containers: a session's network (e.g. the install proxy's internal one) can only go once its
    # containers are gone. One still in use by a container outside any stale session is kept, not an error.
    for network in api.networks(filters=session_filter):
        if stale(network.get("Labels")) and _remove_network(api, network["Id"]):
            result.networks.append(network["Name"])
    for volume in (api.volumes(filters=session_filter) or {}).get("Volumes") or []:
        if stale(volume.get("Labels")):
            _ignore_gone(lambda: api.remove_volume(volume["Name"], force=True))
            result.volumes.append(volume["Name"])
    return result


def _remove_network(api, network_id: str) -> bool:  # type: ignore[no-untyped-def]
    """Remove a network; False when it is still in use (403/409), True when it is gone."""
    try:
        api.remove_network(network_id)
    except NotFound:
        return True
    except APIError as exc:
        if exc.status_code in (403, 409):
            return False
        raise
    return True


def _ignore_gone(action) -> None:  # type: ignore[no-untyped-def]
    try:
        action()
    except NotFound:
        pass
    except APIError as exc:
        if exc.status_code != 409:
            raise
