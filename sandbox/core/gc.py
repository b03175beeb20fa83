"""Sweep what dead scanner sessions left behind: containers, networks and volumes labelled with a session and named
as that session names what it creates (sandbox/core/session.py's name_prefix).

Labels alone do not make a resource a session's: a container gets every label of its image that its creator did not
set, so one run by hand from an image that carries a session's labels (committed from a scan's container, an
installed image cached before its session labels were cleared, or an image whose author wrote them) looked like that
session's, and was removed (killed, with its anonymous volumes) or kept as its owner's process said. A scan's own
containers are unaffected (the session sets every label the sweep reads, and the engine lets those win), and so is
teardown after SIGKILL: every container and network a session creates is named with its session when created."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from functools import partial

import docker
from docker.errors import APIError, NotFound

from sandbox.core import labels
from sandbox.core.engine import EngineTimeout
from sandbox.core.session import leftover, name_prefix, refusal_words, removal_refusal


@dataclass
class SweepResult:
    containers: list[str] = field(default_factory=list)
    networks: list[str] = field(default_factory=list)
    volumes: list[str] = field(default_factory=list)
    kept_live_sessions: set[str] = field(default_factory=set)
    failed: list[str] = field(default_factory=list)  # what a dead session left that could not go, and why

    @property
    def total(self) -> int:
        return len(self.containers) + len(self.networks) + len(self.volumes)


def sweep(client: docker.DockerClient, *, everything: bool = False, keep_session: str | None = None) -> SweepResult:
    """Remove labelled resources whose scanner is gone (`everything`: all labelled, live or not, except keep_session).
    One the engine will not remove (a refusal asked again as teardown does, a network or volume still in use) does
    not stop the rest: it is named in `failed`, with the engine's words. Only an engine that stopped answering
    raises (EngineTimeout). Cached installs are not touched here: `gc --images` evicts them through
    sandbox/core/image_cache.py."""
    result = SweepResult()
    api = client.api
    session_filter = {"label": labels.SESSION}

    def stale(resource_labels: dict[str, str] | None, names: list[str]) -> bool:
        resource_labels = resource_labels or {}
        session = resource_labels.get(labels.SESSION, "")
        if not session or session == keep_session:
            return False  # an empty session label is no session's (a container run by hand from an installed image)
        if not any(name.lstrip("/").startswith(name_prefix(session)) for name in names):
            return False  # labelled, but not created by that session (see the module)
        if everything or not labels.owner_alive(resource_labels):
            return True
        result.kept_live_sessions.add(session)
        return False

    for container in api.containers(all=True, filters=session_filter):
        if stale(container.get("Labels"), container.get("Names") or []):
            refusal = removal_refusal(client, container["Id"])
            if refusal is None:
                result.containers.append(container["Id"][:12])
            else:
                result.failed.append(leftover(container["Id"], {container["Id"]: refusal}))
    # Networks after containers: a session's network (e.g. the install proxy's internal one) can only go once its
    # containers are gone. One still in use (by a container refused above, or one outside any stale session) is kept.
    for network in api.networks(filters=session_filter):
        if stale(network.get("Labels"), [network["Name"]]):
            _record(result.networks, result.failed, network["Name"],
                    _refusal(partial(api.remove_network, network["Id"]), (403, 409)))
    for volume in (api.volumes(filters=session_filter) or {}).get("Volumes") or []:
        if stale(volume.get("Labels"), [volume["Name"]]):
            _record(result.volumes, result.failed, volume["Name"],
                    _refusal(partial(api.remove_volume, volume["Name"], force=True), (409,)))
    return result


def _record(removed: list[str], failed: list[str], name: str, refusal: str | None) -> None:
    if refusal is None:
        removed.append(name)
    else:
        failed.append(f"{name} ({refusal})")


def _refusal(remove: Callable[[], object], in_use: tuple[int, ...]) -> str | None:
    """Remove a network or volume; None once it is gone, else why not (`in_use`: the statuses that say still in use)."""
    try:
        remove()
    except NotFound:
        return None
    except EngineTimeout:
        raise
    except APIError as exc:
        return refusal_words(exc, "still in use" if exc.status_code in in_use else "the engine refused")
    return None
