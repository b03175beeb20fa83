"""The engine work a package scan can begin before the scan machinery is imported: the engine connection, the scan's
sandbox session, (in "observe" mode) its egress sink's container and, for a cached install, the server itself.

Importing the scan path (mcp, its pydantic models, the report model) costs more than a second of CPU, and the
engine work needs none of it: the sink's container is created, its policy checked as applied and started while the
CLI imports, in threads of its own (`HeadStart`). Given the scan's options (`ScanOptions`, which imports no mcp),
other threads resolve the target and, when the install is cached, start the server, seed it (probes on) and start
the second listing's server beside it (scanner/pipeline/early_server.py), so the server boots while the CLI imports the
listing code. The connection and the sink may begin before the CLI itself is imported, with no options yet
(scanner/cli/early_start.py): the scan then asks whether the sink `fits` its options and `begin`s the rest on it.

Cross-thread imports: this module imports only the sandbox side (docker and sandbox.*), all of it before the first
thread starts; `HeadStart` imports scanner/pipeline/early_resolve.py (and through it all the resolution runs) in the
main thread before it submits the resolution, then scanner/pipeline/early_server.py (all the server's start runs)
before it submits that, while the registry answers; every thread runs only code imported before it
started. So no thread imports a module of ours but the main one, and never two at once.

`run_scan(..., head_start=...)` takes the session over (`take`) once the target is resolved, and from then on the
session is the scan's: its teardown removes the sink and the servers as it removes every container. A scan that
never takes it (the target was refused, the resolution failed, a flag was bad, Ctrl-C during the imports), or was
interrupted before it tore it down, closes it: `close` halts the session, waits for the pool's tasks and tears the
session down, with the signals held, so nothing is left behind. The work that may take long runs in daemon threads that
closing (or `halt`, for a scan interrupted after it took the session) gives up instead of waiting for: the engine
connection (an engine that never answers: 120 s), the registry client and the resolution (a registry that never
answers: 30 s) and the sink's creation (the scan's own head start builds a missing sink image, its steps said on the
scan's spinner once it shows: `show`). None of them creates a container once the session is halted, so an interrupt
ends the scan at once instead of waiting for that work, every signal held. A process killed before that
(SIGTERM during the imports ends it at once) leaves containers labelled with its session, which the next scan's gc
sweep (or `mcp-sandbox gc`) removes once this process is gone. A failure in a thread (no engine, a sink that did
not start, a resolution the registry refused) is raised where the scan asks for what failed, as it was when the
scan did this work itself.
"""

from __future__ import annotations

from collections.abc import Callable
import dataclasses
from concurrent.futures import Future, InvalidStateError, ThreadPoolExecutor
import threading
import time
from typing import TYPE_CHECKING, TypeVar

import docker
import requests
from docker.errors import APIError, DockerException

from sandbox.core import engine
from sandbox.core.errors import ImageMissing, SandboxError
from sandbox.core.session import SandboxSession
from sandbox.run.sink import LaunchedSink, create_sink, start_created
from scanner.pipeline.interrupts import interrupted_line, uninterruptible
from scanner.pipeline.phase_clock import PhaseClock

if TYPE_CHECKING:
    import httpx

    from sandbox.install.request import InstallRequest
    from scanner.pipeline.early_server import EarlyServer
    from scanner.pipeline.scan_options import ScanOptions


# What an engine that stopped answering raises: gc sweeps the session's labelled containers once this process is gone.
ENGINE_GONE = (APIError, DockerException, SandboxError, requests.exceptions.RequestException)
T = TypeVar("T")


def _not_begun() -> Future[SandboxSession]:
    """The session's place before its task is submitted: failed, so a head start closed then has nothing to tear
    down."""
    placeholder: Future[SandboxSession] = Future()
    placeholder.set_exception(SandboxError("the head start was stopped before it connected"))
    return placeholder


def _in_background(work: Callable[[], T], name: str, dropped: Callable[[T], object] | None = None) -> Future[T]:
    """`work` in a daemon thread of its own: the engine connection (an engine that accepts the connection and never
    answers holds it for the client's timeout, 120 s), the registry client and the resolution (a registry that never
    answers: 30 s), the sink's creation (which may build its image). A head start closed meanwhile (a bad flag,
    Ctrl-C) must not wait for any of these, nor hold the process's exit (concurrent.futures joins its pool's threads
    at exit), so `close` fails their futures instead (`_give_up`): none creates a container once the session is
    halted, and what `work` returns after that is handed to `dropped` (a registry client: closed) or dropped."""
    future: Future[T] = Future()

    def run() -> None:
        try:
            result = work()
        except BaseException as exc:  # handed to whoever asks for the result, as the pool would hand it
            _settle(future, lambda: future.set_exception(exc))
            return
        if not _settle(future, lambda: future.set_result(result)) and dropped is not None:
            dropped(result)
    threading.Thread(target=run, name=name, daemon=True).start()
    return future


def _settle(future: Future[T], outcome: Callable[[], None]) -> bool:
    """Settle the future unless `close` gave it up first (then False)."""
    try:
        outcome()
    except InvalidStateError:
        return False
    return True


def _give_up(future: Future[T] | None, what: str) -> None:
    """A thread's work still under way when the head start closes (or the scan that took it is interrupted): failed
    now, so every task waiting on it ends (see `_in_background`)."""
    if future is not None:
        failed = future
        _settle(failed, lambda: failed.set_exception(SandboxError(f"the head start was closed {what}")))


def _quietly(action: Callable[[], object]) -> None:
    try:
        action()
    except ENGINE_GONE:
        pass


class HeadStart:
    """The engine connection, a sandbox session and its sink's container, begun in threads; with `options`, the
    resolution and a cached install's servers in others (see the module)."""

    def __init__(self, *, observe: bool, hostname: str, options: ScanOptions | None = None,
                 build_images: bool = True) -> None:
        """`build_images` False: a sink whose image is not built fails with ImageMissing (and does not `fit`)
        instead of building it, for a head start begun before anyone knows the scan will run."""
        self.observe, self.hostname = observe, hostname  # what the sink was made for (`fits`)
        self.clock = PhaseClock()  # the scan's clock: the phases run here are timed on it
        self.began = time.monotonic()  # the scan's start: its `total` counts from here, as its phases do
        self._build_images = build_images
        self.closed = False  # `close` was called
        self._http: Future[httpx.Client] | None = None  # the registry client (`registry`), closed with the head start
        self._shown: Callable[[str], None] | None = None  # where a build of the sink's image says its steps (`show`)
        self.request: Future[InstallRequest] | None = None
        self.server: Future[EarlyServer | None] | None = None
        self._session: Future[SandboxSession] = _not_begun()
        self._sink_created: Future[LaunchedSink] | None = None
        self.sink: Future[LaunchedSink] | None = None
        # Each task waits only on tasks submitted before it, so the pool never waits on work it has not begun.
        self._pool = ThreadPoolExecutor(max_workers=4, thread_name_prefix="mcp-sandbox-head")
        try:
            with uninterruptible():  # a signal as a thread starts is raised once every task is known, then closes
                self._session = _in_background(self._connect, "mcp-sandbox-head-connect")
                # The sink created, then started in another task: the server's container is created in its
                # namespace while the sink starts (the server starts only once the sink is ready: wait_ready).
                if observe:
                    self._sink_created = _in_background(lambda: self._create_sink(hostname), "mcp-sandbox-head-sink")
                    self.sink = self._pool.submit(self._start_sink)
            if options is not None:
                self.begin(options)
        except BaseException:
            self.close(ending=True)
            raise

    @property
    def begun(self) -> bool:
        """Whether a scan's resolution and servers were begun here (`begin`): a scan adopted this head start."""
        return self.request is not None

    @property
    def connected(self) -> bool:
        """Whether the engine answered and the session was made (once the connection ended)."""
        return self._session.done() and self._session.exception() is None

    def fits(self, options: ScanOptions) -> bool:
        """Whether this head start's sink (or its lack) is the one `options` scan with: the same network mode and,
        observing, the sink made with the run policy's host name."""
        if (options.network == "observe") != self.observe:
            return False
        if not self.observe:
            return True
        created = self._sink_created  # a sink not made for want of its image (build_images False) does not fit:
        return options.policy.hostname == self.hostname and (  # the scan's own head start builds the image
            created is None or not isinstance(created.exception(), ImageMissing))

    def interrupted_line(self) -> str:
        """After `close`: the line an interrupt that ended the command says, true to the teardown; plain
        "interrupted" when the engine never answered (no sandbox was made)."""
        return interrupted_line(self.left_behind()) if self.connected else "interrupted"

    def begin(self, options: ScanOptions) -> None:
        """Begin the resolution and (a cached install) the servers for `options` (a scan adopting a head start asks
        `fits` first); once. An interrupt while their code is imported tears the threads' work down here."""
        if self.request is not None:
            raise ValueError("a head start begins one scan's server")
        try:
            self._begin_server(options)
        except BaseException:
            self.close(ending=True)
            raise

    def client(self) -> docker.DockerClient:
        """The engine client (EngineUnavailable, as engine.connect raises it, when no engine answered)."""
        return self._session.result().client

    def registry(self) -> httpx.Client | None:
        """The registry client the resolution used (the scan's one, closed with the head start), if it ran here."""
        return self._http.result() if self._http is not None else None

    def show(self, progress: Callable[[str], None]) -> None:
        """Where the sink's image build (the scan's own head start builds a missing one) says its steps from now on:
        the scan's spinner, once it shows (its steps before that are not shown)."""
        self._shown = progress

    def halt(self) -> None:
        """The scan that took the session is ending before its stages did (an interrupt): what the threads still
        wait for is given up (a sink image's build among it) and the session halted (`SandboxSession.halt`), so the
        scan's wait for its threads ends now."""
        self._give_up_threads()
        self._session.result().halt()

    def take(self) -> SandboxSession:
        """The session, now the scan's to tear down (the servers begun here with it; their attaches are closed
        with the head start, which a scan that failed before serving them does not do)."""
        return self._session.result()

    def close(self, *, ending: bool = False) -> None:
        """Tear the session down unless the scan did: give up what the daemon threads have not returned, halt the
        session (no thread creates a container any more, and a thread waiting on one returns now), wait for the
        pool's tasks, then remove what they made; close the registry client.
        All of it with the signals held, so a second signal cannot leave a thread creating what nothing removes;
        `ending`: the scan is ending already (an interrupt, an error), so a signal held meanwhile is dropped."""
        self.closed = True
        try:
            with uninterruptible(redeliver=not ending):
                self._give_up_threads()
                session = self._untorn_session()
                if session is not None:
                    _quietly(session.halt)
                self._pool.shutdown(wait=True)
                self._tear_down(session)
        finally:
            http = self._http  # settled by now, or given up (then its thread closes the client it makes)
            if http is not None and http.done() and http.exception() is None:
                http.result().close()

    def left_behind(self) -> list[str] | None:
        """After `close`: what the session's teardown could not remove (empty: nothing, or no session was made);
        None when the teardown did not finish (the engine stopped answering)."""
        if self._session.exception() is not None:
            return []  # no engine: nothing was created
        result = self._session.result().teardown_result
        return None if result is None else list(result.leftovers)

    def __enter__(self) -> HeadStart:
        return self

    def __exit__(self, exc_type: type[BaseException] | None, *exc: object) -> None:
        self.close(ending=exc_type is not None)

    def _give_up_threads(self) -> None:
        """Fail what the daemon threads have not returned yet (`_in_background`): the pool's tasks waiting on it
        end, and the sink's build says no more steps."""
        self._shown = None
        _give_up(self._session, "before the engine answered")
        _give_up(self._http, "before the registry client was made")
        _give_up(self.request, "before the registry answered")
        _give_up(self._sink_created, "before the sink was created")

    def _untorn_session(self) -> SandboxSession | None:
        """The session, unless its engine never answered or the scan that took it tore it down (a scan interrupted
        as it took it over has not: that one is torn down here)."""
        if self._session.exception() is not None:
            return None
        session = self._session.result()
        return session if session.teardown_result is None else None

    def _tear_down(self, session: SandboxSession | None) -> None:
        """The begun servers' attaches closed (a scan that took them closed those it served, and closing again is
        nothing; not those it failed before serving), then the session torn down unless the scan did."""
        early = self.server
        if early is not None and early.exception() is None and early.result() is not None:
            early.result().close()  # type: ignore[union-attr]
        if session is not None:
            _quietly(session.teardown)

    def _begin_server(self, options: ScanOptions) -> None:
        """Import what the resolution runs (here, in the main thread) and submit it; then the same for the server's
        start, imported while the registry answers."""
        from scanner.pipeline import early_resolve

        http = self._http = _in_background(lambda: options.registry_endpoints().client(), "mcp-sandbox-head-registry",
                                           dropped=lambda client: client.close())
        self.request = _in_background(lambda: early_resolve.resolve(options, http.result(), self.clock),
                                      "mcp-sandbox-head-resolve")
        if options.use_cache:  # --no-cache: the install runs as the scan runs it
            from scanner.pipeline import early_server

            self.server = self._pool.submit(self._early_server, self.request, options, early_server.begin)

    def _early_server(self, request: Future[InstallRequest], options: ScanOptions,
                      begin: Callable[..., EarlyServer | None]) -> EarlyServer | None:
        if request.exception() is not None or self._session.exception() is not None:
            return None  # raised where the scan asks for the request or the engine
        created = self._sink_created
        if created is not None and created.exception() is not None:
            return None  # the scan raises the sink's failure where it starts the sink
        sink = dataclasses.replace(created.result(), started=self.sink) if created is not None else None
        return begin(self._session.result(), sink, request.result(), options, self.clock)

    def _connect(self) -> SandboxSession:
        with self.clock.phase("engine_connect"):
            return SandboxSession(engine.connect())

    def _create_sink(self, hostname: str) -> LaunchedSink:
        session = self._session.result()
        with self.clock.phase("sink_start"):
            return create_sink(session, hostname=hostname, build=self._build_images, progress=self._build_step)

    def _build_step(self, step: str) -> None:
        """A step of the sink image's build, on the scan's spinner once it shows (`show`)."""
        shown = self._shown
        if shown is not None:
            shown(f"building the egress sink's image: {step}")

    def _start_sink(self) -> LaunchedSink:
        assert self._sink_created is not None
        created = self._sink_created.result()
        with self.clock.phase("sink_start"):
            return start_created(created)
