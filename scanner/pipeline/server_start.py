"""Stage 5: run the installed server in the sandbox: the egress sink first (in "observe" mode), then the probe
plan's canaries and workspace seed, then the server under the run policy (checked as applied by the engine), created
while the sink boots. The
sink's own applied policy and the server's network namespace (interfaces, addresses, routes, read from inside it) are
kept for the report, so it shows the containment."""

from __future__ import annotations

import dataclasses
from collections.abc import Callable
from dataclasses import dataclass
from typing import Literal

from sandbox.core.session import SandboxSession
from sandbox.run import server as run
from sandbox.run.netns import NetworkNamespace
from sandbox.run.observe import ObserveError, network_namespace
from sandbox.run.policy import WORKSPACE, RunPolicy, SinkPolicy
from sandbox.run.seeding import Seeded
from sandbox.run.server import RunningServer
from sandbox.run.sink import LaunchedSink, Sink, launch_sink
from scanner.pipeline.phase_clock import PhaseClock
from scanner.pipeline.scan_options import Progress
from scanner.probes import run_plan as probe_plan
from scanner.probes.egress_drain import EgressDrain
from scanner.probes.options import ProbeOptions


@dataclass(frozen=True)
class StartedServer:
    server: RunningServer
    plan: probe_plan.ProbePlan
    restart: Callable[[], RunningServer]  # a fresh server from the installed image, same command and policy
    network: Literal["observe", "none"]
    drain: EgressDrain | None  # the sink's attempts per container, when the network is observed
    sink: SinkPolicy | None = None  # the sink container's applied policy, when the network is observed
    namespace: NetworkNamespace | None = None  # the server's network namespace, read from inside at start
    namespace_unread: str | None = None  # why it could not be read
    seeded: Seeded | None = None  # seeded already (by the head start: scanner/pipeline/early_server.py); None: not yet


def start(session: SandboxSession, image: str, command: list[str], policy: RunPolicy, *,
          network: Literal["observe", "none"], probes: ProbeOptions, progress: Progress,
          clock: PhaseClock | None = None, launched: LaunchedSink | None = None,
          plan: probe_plan.ProbePlan | None = None, read_namespace: bool = True,
          working_dir: str = WORKSPACE) -> StartedServer:
    """The sink's container boots (`launched`: already, beside the install) while the probe plan is made and the
    server's container is created in its namespace (creating needs the sink to exist, starting needs its listeners
    up); then the server starts. `plan` is the probe plan when already made (beside the install; its network mode is
    set here). `read_namespace=False` leaves the namespace to the caller (`server_namespace`, in a
    thread beside the listing). `image`: the installed image, or a container image as shipped (its WORKDIR as
    `working_dir`)."""
    clock = clock or PhaseClock()
    if network == "observe":
        if launched is None:
            launched = start_sink_container(session, policy, progress, clock)
        policy = dataclasses.replace(policy, network_mode=launched.network_mode)
    else:
        launched = None
    progress("starting the server in the sandbox")
    if plan is None:
        plan = clock.timed("probe_plan", probe_plan.prepare, probes, policy)  # canaries and the workspace seed
    plan = dataclasses.replace(plan, policy=dataclasses.replace(plan.policy, network_mode=policy.network_mode))
    with clock.phase("container_create"):
        created = run.create_server(session, image, command, plan.policy, working_dir)
    drain: EgressDrain | None = None
    sink_policy: SinkPolicy | None = None
    if launched is not None:
        with clock.phase("sink_start"):
            sink = _ready(launched, created)
        drain, sink_policy = EgressDrain(sink), sink.policy()
    with clock.phase("container_start"):
        server = run.start_created(session, created)
    namespace, unread = None, None
    if read_namespace:
        with clock.phase("namespace_read"):
            namespace, unread = server_namespace(session, server)
    return StartedServer(server=server, plan=plan, network=network, drain=drain, sink=sink_policy,
                         namespace=namespace, namespace_unread=unread,
                         restart=lambda: run.start_server(session, image, command, plan.policy, working_dir))


def start_sink_container(session: SandboxSession, policy: RunPolicy, progress: Progress,
                         clock: PhaseClock) -> LaunchedSink:
    """The egress sink's container, started (its listeners not up yet), carrying the server's host name."""
    progress("starting the egress sink")
    with clock.phase("sink_start"):
        return launch_sink(session, progress=progress, hostname=policy.hostname)


def _ready(launched: LaunchedSink, created: run.CreatedServer) -> Sink:
    """The sink, once its listeners are up; the created server's attach is closed if it never comes up."""
    try:
        return launched.wait_ready()
    except BaseException:
        created.socket.close()
        raise


def server_namespace(session: SandboxSession, server: RunningServer) -> tuple[NetworkNamespace | None, str | None]:
    """The server's network namespace, or why it could not be read (a server that exited at once has none left)."""
    try:
        return network_namespace(session.client, server.container_id), None
    except ObserveError as exc:
        return None, str(exc)
