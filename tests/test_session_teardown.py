"""Teardown removes the session's containers at once, not one after the other (each removal is a kill and a wait in
the engine), and still removes the networks only once every container is gone. An engine stand-in records the calls:
what is tested is the order and overlap of the calls, not containment (the docker tests cover that)."""

from __future__ import annotations

import threading
from dataclasses import dataclass, field
from typing import Any

from sandbox.core.session import SandboxSession


@dataclass
class RecordingApi:
    """Answers create/remove/list like the engine; each removal waits until `overlap` removals are in progress."""

    overlap: int
    calls: list[str] = field(default_factory=list)
    created: int = 0

    def __post_init__(self) -> None:
        self.barrier = threading.Barrier(self.overlap, timeout=5)

    def create_container(self, **_kwargs: Any) -> dict[str, str]:
        self.created += 1
        return {"Id": f"c{self.created}" + "0" * 20}

    def create_network(self, name: str, **_kwargs: Any) -> None:
        self.calls.append(f"create {name}")

    def remove_container(self, container_id: str, **_kwargs: Any) -> None:
        self.barrier.wait()  # BrokenBarrierError when the removals run one after the other
        self.calls.append(f"remove {container_id[:2]}")

    def remove_network(self, name: str) -> None:
        self.calls.append(f"remove network {name}")

    def containers(self, **_kwargs: Any) -> list[dict[str, str]]:
        return []

    def networks(self, **_kwargs: Any) -> list[dict[str, str]]:
        return []


@dataclass
class RecordingClient:
    api: RecordingApi


def test_teardown_removes_the_containers_at_once_then_the_networks() -> None:
    api = RecordingApi(overlap=3)
    session = SandboxSession(RecordingClient(api))  # type: ignore[arg-type]
    for role in ("sink", "server", "relist"):
        session.create_container(role, image="i")
    network = session.create_network("run")
    result = session.teardown()
    assert result.complete and result.removed == ["c1" + "0" * 10, "c2" + "0" * 10, "c3" + "0" * 10, network]
    removals = [call for call in api.calls if call.startswith("remove ")]
    assert sorted(removals[:3]) == ["remove c1", "remove c2", "remove c3"]
    assert removals[3:] == [f"remove network {network}"]
