"""The engine work a package scan can begin before the scan machinery is imported: the engine connection, the scan's
sandbox session and (in "observe" mode) its egress sink's container.

Importing the scan path (mcp, its pydantic models, the report model) costs more than a second of CPU, and the
engine work needs none of it: the sink's container is created, its policy checked as applied and started while the
CLI imports, in one thread (`HeadStart`). This module imports only the sandbox side (docker and sandbox.*), and it
imports all of it before the thread starts, so the thread and the importing main thread never import a module of
ours at once.

`run_scan(..., head_start=...)` takes the session over (`take`) once the target is resolved, and from then on the
session is the scan's: its teardown removes the sink as it removes every container. A scan that never takes it (the
target was refused, the resolution failed, a flag was bad) closes it: `close` waits for the thread and tears the
session down, so nothing is left behind. A failure in the thread (no engine, a sink that did not start) is raised
where the scan asks for what failed, as it was when the scan did this work itself.
"""

from __future__ import annotations

from concurrent.futures import Future, ThreadPoolExecutor

import docker
from docker.errors import APIError, DockerException

from sandbox.core import engine
from sandbox.core.errors import SandboxError
from sandbox.core.session import SandboxSession
from sandbox.run.sink import LaunchedSink, launch_sink
from scanner.pipeline.phase_clock import PhaseClock


class HeadStart:
    """The engine connection, a sandbox session and its sink's container, begun in a thread (see the module)."""

    def __init__(self, *, observe: bool, hostname: str) -> None:
        self.clock = PhaseClock()  # the scan's clock: engine_connect and sink_start are timed here
        self._pool = ThreadPoolExecutor(max_workers=1, thread_name_prefix="mcp-sandbox-head")
        self._session: Future[SandboxSession] = self._pool.submit(self._connect)
        self.sink: Future[LaunchedSink] | None = self._pool.submit(self._launch, hostname) if observe else None
        self._taken = False

    def client(self) -> docker.DockerClient:
        """The engine client (EngineUnavailable, as engine.connect raises it, when no engine answered)."""
        return self._session.result().client

    def take(self) -> SandboxSession:
        """The session, now the scan's to tear down."""
        session = self._session.result()
        self._taken = True
        return session

    def close(self) -> None:
        """Wait for the thread; tear the session down unless a scan took it."""
        self._pool.shutdown(wait=True)
        if self._taken or self._session.exception() is not None:
            return
        try:
            self._session.result().teardown()
        except (APIError, DockerException, SandboxError):
            pass  # an engine that stopped answering: gc sweeps the labelled sink once this process is gone

    def __enter__(self) -> HeadStart:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def _connect(self) -> SandboxSession:
        with self.clock.phase("engine_connect"):
            return SandboxSession(engine.connect())

    def _launch(self, hostname: str) -> LaunchedSink:
        session = self._session.result()
        with self.clock.phase("sink_start"):
            return launch_sink(session, hostname=hostname)
