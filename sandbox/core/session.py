"""A sandbox session: every container and network it creates is labelled and tracked, and teardown removes them all
(containers first, then networks), verified."""

from __future__ import annotations

import threading
import time
import uuid
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from typing import Any

import docker
from docker.errors import APIError, NotFound

from sandbox.core import labels
from sandbox.core.engine import EngineTimeout
from sandbox.core.errors import SandboxError

MAX_PARALLEL_REMOVALS = 4  # a scan's session holds a few containers (sink, server, second server, readers)
# An engine refuses a removal now and then for a passing reason ("device or resource busy" unmounting the container's
# layer while other containers start and stop): teardown asks again, after 0.5 s and 1 s, before it gives up on one.
REMOVAL_ATTEMPTS = 3
REMOVAL_PAUSE_SECONDS = 0.5
REFUSAL_CHARS = 200  # of the engine's message, in a leftover's line


def name_prefix(session_id: str) -> str:
    """How the name of every container and network of the session begins. The engine sets a name only when the
    resource is created, from what its creator asked, so unlike a label no image can hand it down (sandbox/core/gc.py
    sweeps only what is named so)."""
    return f"mcp-sandbox-{session_id[:12]}-"


class SessionEnding(SandboxError):
    """The session was halted (the scan is ending): it creates no container any more."""


@dataclass
class TeardownResult:
    complete: bool
    seconds: float
    removed: list[str] = field(default_factory=list)
    leftovers: list[str] = field(default_factory=list)


class SandboxSession:
    """Owns the containers and networks of one scan. Use as a context manager, or call teardown() in a finally block."""

    def __init__(self, client: docker.DockerClient, session_id: str | None = None) -> None:
        self.client = client
        self.id = session_id or uuid.uuid4().hex
        self._containers: list[str] = []
        self._networks: list[str] = []
        self._creating = threading.Lock()  # threads of one scan create containers at once (names are numbered)
        self._created = 0  # containers ever created: the number in the next name (never reused after a removal)
        self._halted = False
        self.teardown_result: TeardownResult | None = None

    def labels(self, role: str) -> dict[str, str]:
        return labels.session_labels(self.id, role)

    def name(self, role: str) -> str:
        return f"{name_prefix(self.id)}{role}-{self._created}"

    def create_container(self, role: str, **kwargs: Any) -> str:
        """Create a labelled container through the low-level API and track it; returns its id."""
        with self._creating:
            if self._halted:
                raise SessionEnding(f"not creating the {role} container: the scan is ending")
            created = self.client.api.create_container(labels=self.labels(role), name=self.name(role), **kwargs)
            container_id = str(created["Id"])
            self._containers.append(container_id)
            self._created += 1
        return container_id

    def remove_container(self, container_id: str) -> None:
        """Kill and remove one tracked container now (e.g. a crashed server before a restart)."""
        _force_remove(self.client, container_id)
        if not _exists(self.client, container_id):
            with self._creating:  # a container another thread creates meanwhile stays tracked
                self._containers = [c for c in self._containers if c != container_id]

    def halt(self) -> None:
        """The scan is ending before its stages did (an interrupt): refuse every later container and kill the running
        ones, so a thread of the scan waiting on one of them (the second listing's handshake, a read) returns now
        instead of at its own timeout. Nothing is removed here: teardown removes and verifies, as always."""
        with self._creating:  # a create in progress finishes first, and is killed with the rest
            self._halted = True
            own = list(self._containers)
        for container_id in own:
            try:
                self.client.api.kill(container_id)
            except (NotFound, APIError):
                pass  # not running (or gone): nothing to wake

    def create_network(self, role: str, *, internal: bool = True) -> str:
        """Create a labelled bridge network (by default `internal`: no route off the machine) and track it; returns
        its name. Teardown removes it after the containers."""
        name = f"{name_prefix(self.id)}{role}-net{len(self._networks)}"
        self.client.api.create_network(name, driver="bridge", internal=internal, labels=self.labels(role),
                                       check_duplicate=True)
        self._networks.append(name)
        return name

    def remove_network(self, name: str) -> None:
        """Remove one tracked network now (its containers must be gone or are disconnected first)."""
        _remove_network(self.client, name)
        if not _network_exists(self.client, name):
            self._networks = [n for n in self._networks if n != name]

    def teardown(self) -> TeardownResult:
        """Kill and remove every container of the session, then its networks; also sweep both by label, and verify
        nothing is left."""
        started = time.monotonic()
        try:
            removed, refused = self._remove_all()
            # Everything the session made carries its label, so one query of each kind verifies it is all gone.
            leftovers = [leftover(c, refused) for c in self._labelled_containers()] + self._labelled_networks()
        except EngineTimeout as exc:  # the engine stopped answering: what is left is unknown, so not complete
            removed = []
            leftovers = [*(c[:12] for c in self._containers), *self._networks, f"unverified: {exc}"]
        self._containers = []
        self._networks = []
        self.teardown_result = TeardownResult(
            complete=not leftovers, seconds=round(time.monotonic() - started, 3), removed=removed,
            leftovers=sorted(set(leftovers)),
        )
        return self.teardown_result

    def _remove_all(self) -> tuple[list[str], dict[str, str]]:
        """Remove every container (tracked, then any other the label finds), then the networks; a container the
        engine would not remove does not stop the rest. Returns what was removed, and the refused with the engine's
        last word."""
        own = list(self._containers)
        refused = _force_remove_all(self.client, own)
        removed: list[str] = [container_id[:12] for container_id in own if container_id not in refused]
        for container in self._labelled_containers():
            if container in refused:
                continue  # asked enough already
            refusal = removal_refusal(self.client, container)
            if refusal is not None:
                refused[container] = refusal
            elif container[:12] not in removed:
                removed.append(container[:12])
        for network in [*self._networks, *(n for n in self._labelled_networks() if n not in self._networks)]:
            if _remove_network(self.client, network):
                removed.append(network)
        return removed, refused

    def _labelled_containers(self) -> list[str]:
        found = self.client.api.containers(all=True, quiet=True, filters={"label": f"{labels.SESSION}={self.id}"})
        return [str(c["Id"]) for c in found]

    def _labelled_networks(self) -> list[str]:
        found = self.client.api.networks(filters={"label": f"{labels.SESSION}={self.id}"})
        return [str(n["Name"]) for n in found]

    def __enter__(self) -> SandboxSession:
        return self

    def __exit__(self, *exc: object) -> None:
        if self.teardown_result is None:
            self.teardown()


def _force_remove_all(client: docker.DockerClient, container_ids: list[str]) -> dict[str, str]:
    """Remove the containers at once (each removal is a kill and a wait in the engine); returns those the engine
    refused to remove, each with its last refusal. An engine that stopped answering raises (EngineTimeout), once every
    removal has returned."""
    if len(container_ids) < 2:
        refusals = [removal_refusal(client, container_id) for container_id in container_ids]
    else:
        with ThreadPoolExecutor(max_workers=min(MAX_PARALLEL_REMOVALS, len(container_ids)),
                                thread_name_prefix="mcp-sandbox-teardown") as pool:
            refusals = list(pool.map(lambda container_id: removal_refusal(client, container_id), container_ids))
    return {c: refusal for c, refusal in zip(container_ids, refusals) if refusal is not None}


def removal_refusal(client: docker.DockerClient, container_id: str) -> str | None:
    """Remove a container, asking again after a refusal (REMOVAL_ATTEMPTS in all); None once it is gone, else the
    engine's last refusal. An engine that does not answer at all raises EngineTimeout at once: asking again would
    only multiply the wait."""
    refusal = ""
    for attempt in range(REMOVAL_ATTEMPTS):
        if attempt:
            time.sleep(REMOVAL_PAUSE_SECONDS * attempt)
        try:
            _force_remove(client, container_id)
            return None
        except EngineTimeout:
            raise
        except APIError as exc:
            refusal = str(exc.explanation or exc)
    return refusal


def refusal_words(exc: APIError, why: str) -> str:
    """`why: the engine's words`, on one line and bounded (a refusal as a leftover's line says it)."""
    words = " ".join(str(exc.explanation or exc).split())[:REFUSAL_CHARS]
    return f"{why}: {words}"


def leftover(container_id: str, refused: dict[str, str]) -> str:
    """A container teardown left: its short id, and why when the engine refused to remove it."""
    refusal = refused.get(container_id)
    if refusal is None:
        return container_id[:12]
    words = " ".join(refusal.split())[:REFUSAL_CHARS]
    return f"{container_id[:12]} (the engine refused to remove it: {words})"


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


def _remove_network(client: docker.DockerClient, name: str) -> bool:
    """Remove a network; endpoints still attached (a container removed concurrently, or one not of this session)
    are force-disconnected first. True once it is gone; False when the engine refused (the caller's check of what
    is left names it). Only an engine that stopped answering raises (EngineTimeout)."""
    try:
        client.api.remove_network(name)
        return True
    except NotFound:
        return True
    except EngineTimeout:
        raise
    except APIError as exc:
        if exc.status_code not in (403, 409):  # 403: "has active endpoints"
            return False
    try:
        attached = client.api.inspect_network(name).get("Containers") or {}
        for container_id in attached:
            try:
                client.api.disconnect_container_from_network(container_id, name, force=True)
            except EngineTimeout:
                raise
            except (NotFound, APIError):
                pass
        client.api.remove_network(name)
    except NotFound:
        return True
    except EngineTimeout:
        raise
    except APIError:
        return False
    return True


def _network_exists(client: docker.DockerClient, name: str) -> bool:
    try:
        client.api.inspect_network(name)
    except NotFound:
        return False
    return True
