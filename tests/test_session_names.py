"""Container names of one session are never reused, even when a container created earlier is removed while later
ones live (the scan's source stage removes its reading container while the run's and the second listing's are up).
The engine here is a stand-in that keeps Docker's one rule this is about: a name is unique among live containers."""

from __future__ import annotations

from typing import Any

from docker.errors import APIError, NotFound

from sandbox.core.session import SandboxSession


class _Api:
    def __init__(self) -> None:
        self.live: dict[str, str] = {}  # id -> name

    def create_container(self, *, name: str, **_: Any) -> dict[str, str]:
        if name in self.live.values():
            raise APIError(f"409 Conflict: the container name {name} is already in use")
        container_id = f"id{len(self.live)}-{name}"
        self.live[container_id] = name
        return {"Id": container_id}

    def remove_container(self, container_id: str, **_: Any) -> None:
        if self.live.pop(container_id, None) is None:
            raise NotFound("no such container")

    def inspect_container(self, container_id: str) -> dict[str, str]:
        if container_id not in self.live:
            raise NotFound("no such container")
        return {"Id": container_id}


class _Client:
    def __init__(self) -> None:
        self.api = _Api()


def test_a_removed_container_never_frees_its_number_for_a_live_name() -> None:
    session = SandboxSession(_Client(), session_id="a" * 32)  # type: ignore[arg-type]
    session.create_container("sink")
    reader = session.create_container("read-source")
    session.create_container("run")
    session.remove_container(reader)
    session.create_container("run")  # was "run-2" again: a 409 Conflict beside the live run-2
    names = sorted(session.client.api.live.values())
    assert len(names) == len(set(names)) == 3 and any(name.endswith("-run-3") for name in names)
