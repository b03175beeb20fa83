"""A fresh server from the installed image, seeded like the first: the second listing's (P10) and the conformance
probe's. Apart from the listing code (which imports mcp) so that the head start can begin the second listing's
server while the CLI imports it (scanner/pipeline/early_server.py)."""

from __future__ import annotations

import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from typing import TYPE_CHECKING

from docker.errors import APIError

from sandbox.core.errors import SandboxError
from sandbox.core.session import SandboxSession
from sandbox.run import seeding, server as run
from sandbox.run.observe import ObserveError
from sandbox.run.server import RunningServer

if TYPE_CHECKING:
    from scanner.pipeline.server_start import StartedServer


class FreshServerError(Exception):
    """A fresh server could not be started or seeded (the engine's error, as one line)."""


@dataclass(frozen=True)
class SecondServer:
    """The second listing's server, begun beside the first before the listing code was imported: started and
    seeded (`server`), or why not (`problem`, raised where the relisting starts it: a FreshServerError is the
    relisting's problem, any other failure the relisting stage's, as it would have been had it started it)."""

    began: float  # time.monotonic() when its start began
    server: RunningServer | None = None
    problem: Exception | None = None

    def close(self) -> None:
        """Its attach (the session's teardown removes its container)."""
        if self.server is not None:
            run.close_attach(self.server)


def begin_second(session: SandboxSession, started: StartedServer, what: str = "a second server") -> SecondServer:
    """The second server, begun in the head start beside the first: whatever its start raised is kept, so the first
    server (and the scan) goes on, and the relisting raises it where it takes the second server over."""
    began = time.monotonic()
    try:
        return SecondServer(began, server=start_fresh(session, started, what))
    except Exception as exc:  # noqa: BLE001 - kept, not hidden: raised where the relisting starts the second server
        return SecondServer(began, problem=exc)


def start_fresh(session: SandboxSession, started: StartedServer, what: str) -> RunningServer:
    """A fresh server (`StartedServer.restart`), seeded like the first; FreshServerError if it could not be. A
    server that started and was not seeded is removed (its attach closed) whatever the seeding raised."""
    try:
        server = started.restart()
    except (SandboxError, APIError) as exc:
        raise FreshServerError(f"could not start {what}: {type(exc).__name__}: {exc}") from exc
    try:
        _seed(session, server, started)
    except Exception as exc:  # re-raised (an interrupt leaves the server to the session's teardown)
        run.close_attach(server)
        _remove(session, server)
        if isinstance(exc, ObserveError):
            raise FreshServerError(f"could not seed {what}: {exc}") from exc
        raise
    return server


@contextmanager
def fresh_server(session: SandboxSession, started: StartedServer, what: str = "a fresh server",
                 second: SecondServer | None = None) -> Iterator[RunningServer]:
    """A fresh server from the installed image (`StartedServer.restart`), seeded like the first, removed on exit
    (the session's teardown would remove it anyway). Also what the conformance stage probes on a clean start.
    `second`: one begun already (its failure raised here, as starting it here would have)."""
    if second is None:
        server = start_fresh(session, started, what)
    elif second.server is None:
        raise second.problem or FreshServerError(f"could not start {what}")
    else:
        server = second.server
    try:
        yield server
    finally:
        run.close_attach(server)
        _remove(session, server)


def _seed(session: SandboxSession, server: RunningServer, started: StartedServer) -> None:
    """The same workspace and HOME canaries as the first server had (nothing when probing is off), so that only the
    client identity differs between the two listings."""
    seeding.fill(session.client, server.container_id, started.plan.archives(), open_gate=server.gated)


def _remove(session: SandboxSession, server: RunningServer) -> None:
    try:
        session.remove_container(server.container_id)
    except APIError:
        pass  # still tracked: the session's teardown removes it, or reports it as left over
