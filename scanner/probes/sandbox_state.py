"""What the probe runner asks the engine of one sandbox outside a call's looks (scanner/probes/call_looks.py), each in a
thread so the event loop never waits on the engine: the processes by role, whether the server has exited."""

from __future__ import annotations

import anyio
import docker
from docker.errors import APIError

from sandbox.run import observe
from sandbox.run.observe import ObserveError
from sandbox.run.process_watch import process_table
from scanner.probes.process_tree import classify
from scanner.report.model import ProcessSeen


async def process_roles(client: docker.DockerClient, container_id: str) -> list[ProcessSeen]:
    """The sandbox's processes by role (server, its tree, daemons); empty when they cannot be listed."""
    try:
        table = await anyio.to_thread.run_sync(process_table, client, container_id)
    except ObserveError:
        return []
    return classify(table)


async def has_exited(client: docker.DockerClient, container_id: str) -> bool:
    """Whether the engine says the sandbox's server has exited (False when it does not answer: teardown's own look
    decides)."""
    try:
        state = await anyio.to_thread.run_sync(observe.exit_state, client, container_id)
    except APIError:
        return False
    return not state.running
