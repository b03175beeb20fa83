"""A cached install's server, begun in the head start (scanner/pipeline/head_start.py) while the CLI imports the
listing code: the resolution, the install lookup, the command, the probe plan, the server's create and start and,
with probes on, its seeding (sandbox/run/seeding.py: workspace, canaries, observer, baseline snapshot) need no MCP
client, so they run in the head start's thread, and the scan takes the running, seeded server over (the probe phase
uses its Watch and baseline instead of seeding again; a seeding failure is kept and reported by the probe phase as
its own). Nothing is sent to the server here: the handshake is the main thread's, after the listing code imported.

Only a cached install is begun here: `begin` returns None when the install is not cached (or `--no-cache`), when the
runtime image is missing, or when no command can be chosen, and the scan then does each of these the way it does
without a head start (where it raises the same error at the same point). The resolution before it is
scanner/pipeline/early_resolve.py's (imported and submitted first, so the registry's answer is awaited while this
module is imported). A server whose start failed is returned
with its failure, which the scan raises where it would have started the server. This module imports everything the
thread runs before the thread is given its work (the CLI imports it, then submits `resolve` and `begin`), so the
thread imports no module of ours."""

from __future__ import annotations

import dataclasses
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass

from docker.errors import ImageNotFound

from sandbox.core import images
from sandbox.core.errors import UserInputError
from sandbox.core.session import SandboxSession
from sandbox.install import container as install
from sandbox.install.request import InstalledServer, InstallRequest
from sandbox.run import seeding, server as run
from sandbox.run.sink import LaunchedSink
from scanner.ecosystems.registry import ecosystem as ecosystem_named
from scanner.pipeline.fresh_server import SecondServer, begin_second
from scanner.pipeline.launch import choose_command
from scanner.pipeline.phase_clock import PhaseClock
from scanner.pipeline.scan_options import ScanOptions
from scanner.pipeline.server_start import StartedServer, start
from scanner.probes import run_plan as probe_plan


def _quiet(_: str) -> None:
    """No spinner runs yet: the head start reports no progress."""


@dataclass(frozen=True)
class EarlyServer:
    """A cached install and its server, started (`started`) or not (`failure`, raised where the scan starts it),
    and the second listing's server begun beside it (`second`, None when the first did not start)."""

    installed: InstalledServer
    runtime: images.RuntimeImage
    command: list[str]
    started: StartedServer | None = None
    failure: Exception | None = None
    second: SecondServer | None = None

    def close(self) -> None:
        """The attaches and the seeded server's observer, closed with the head start whether or not a scan took the
        servers (one the scan closed already is closed again for nothing; the session's teardown removes their
        containers)."""
        if self.started is not None:
            run.close_attach(self.started.server)
            if self.started.seeded is not None:
                self.started.seeded.close()
        if self.second is not None:
            self.second.close()


def begin(session: SandboxSession, sink: LaunchedSink | None, request: InstallRequest, options: ScanOptions,
          clock: PhaseClock) -> EarlyServer | None:
    """The cached install's servers, begun (see the module); None: the scan does it all itself."""
    runtime = _runtime_image(session, request.ecosystem)
    if runtime is None:
        return None
    with clock.phase("install_lookup"):
        installed = install.cached_install(session, install.installed_tag(runtime.image_id, request), runtime.tag)
    if installed is None:
        return None
    try:
        command = choose_command(installed.name, installed.entry_points, options.command, options.server_args)
    except UserInputError:
        return None  # raised by the scan where it chooses the command
    with ThreadPoolExecutor(max_workers=1, thread_name_prefix=seeding.THREADS) as beside:
        started = _started_beside_plan(session, sink, installed.image, command, options, clock, beside)
        if isinstance(started, Exception):
            return EarlyServer(installed, runtime, command, failure=started)
        started, second = _seeded_beside_second(session, started, clock, beside,
                                                relisting_off=options.relisting_off() is not None)
    return EarlyServer(installed, runtime, command, started=started, second=second)


def _started_beside_plan(session: SandboxSession, sink: LaunchedSink | None, image: str, command: list[str],
                         options: ScanOptions, clock: PhaseClock,
                         beside: ThreadPoolExecutor) -> StartedServer | Exception:
    """The server created with the canaries' variables and started while the workspace seed is built (`beside`);
    returned with its probe plan complete, or its start's failure (the plan's own raised first, as it came first)."""
    plan = probe_plan.planted(options.probes, options.policy)
    completing = beside.submit(clock.timed, "probe_plan", probe_plan.completed, plan)
    try:
        started = start(session, image, command, options.policy, network=options.network, probes=options.probes,
                        progress=_quiet, clock=clock, launched=sink, plan=plan, read_namespace=False)
    except Exception as exc:  # noqa: BLE001 - not hidden: the scan raises it where it starts the server
        completing.result()
        return exc
    return dataclasses.replace(started, plan=dataclasses.replace(completing.result(), policy=started.plan.policy))


def _seeded_beside_second(session: SandboxSession, started: StartedServer, clock: PhaseClock,
                          beside: ThreadPoolExecutor, *,
                          relisting_off: bool) -> tuple[StartedServer, SecondServer | None]:
    """The server seeded (probing on: its workspace and canaries, observer and baseline, before it is sent anything,
    in `beside`) while P10's second server is begun (none when P10 is turned off: ScanOptions.relisting_off)."""
    plan = started.plan
    if not plan.options.enabled:
        return started, None if relisting_off else clock.timed("relisting", begin_second, session, started)
    seeded = beside.submit(clock.timed, "seed", seeding.seed_ahead, session.client, started.server.container_id,
                           plan.archives(), use_observer=plan.options.observer,
                           opens=plan.canaries.files if plan.canaries is not None else (),
                           open_gate=started.server.gated)
    second = None if relisting_off else clock.timed("relisting", begin_second, session, started)
    return dataclasses.replace(started, seeded=seeded.result()), second


def _runtime_image(session: SandboxSession, ecosystem: str) -> images.RuntimeImage | None:
    """The runtime image when it is built (the scan builds a missing one, with its progress shown)."""
    runtime = ecosystem_named(ecosystem).runtime
    tag = images.image_tag(runtime)
    try:
        return images.RuntimeImage(runtime, tag, session.client.images.get(tag).id, built=False)
    except ImageNotFound:
        return None
