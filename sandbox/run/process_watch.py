"""The sandbox's processes and pids as the engine sees them from outside: nothing here forks inside the container,
so it still works when a server has used up the pids limit (the snapshot exec's shell then cannot start `find`)."""

from __future__ import annotations

from dataclasses import dataclass

import docker
from docker.errors import APIError, NotFound

from sandbox.run.observe import ObserveError, Process, api_message, processes


@dataclass(frozen=True)
class ProcessTable:
    """The container's processes and the host pid of its init (docker-init, the server's parent), None if unknown."""

    processes: list[Process]
    init_pid: int | None


def process_table(client: docker.DockerClient, container_id: str) -> ProcessTable:
    """The processes (`top`) and the init's host pid (`inspect`): what the scanner needs to tell the server's own
    process tree from a daemon reparented to init."""
    try:
        state = client.api.inspect_container(container_id).get("State") or {}
    except (APIError, NotFound) as exc:
        raise ObserveError(f"could not inspect the sandbox: {api_message(exc)}") from exc
    pid = state.get("Pid")
    return ProcessTable(processes(client, container_id), pid if isinstance(pid, int) and pid > 0 else None)


def pids_in_use(client: docker.DockerClient, container_id: str) -> tuple[int, int] | None:
    """(pids in use, pids limit) as the engine's stats report them: read from outside, so it works when nothing can
    fork inside the sandbox. None when the engine gives no numbers."""
    try:
        stats = client.api.stats(container_id, stream=False, one_shot=True)
    except (APIError, NotFound, TypeError):
        return None
    pids = stats.get("pids_stats") or {}
    current, limit = pids.get("current"), pids.get("limit")
    if not isinstance(current, int) or not isinstance(limit, int) or limit <= 0:
        return None
    return current, limit
