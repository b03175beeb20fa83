"""Stage 5: run the installed server in the sandbox: the egress sink first (in "observe" mode), then the probe
plan's canaries and workspace seed, then the server under the run policy (checked as applied by the engine). The
sink's own applied policy and the server's network namespace (interfaces, addresses, routes, read from inside it) are
kept for the report, so it shows the containment."""

from __future__ import annotations

import dataclasses
from collections.abc import Callable
from dataclasses import dataclass
from typing import Literal

from sandbox.core.session import SandboxSession
from sandbox.install.request import InstalledServer
from sandbox.run import server as run
from sandbox.run.netns import NetworkNamespace
from sandbox.run.observe import ObserveError, network_namespace
from sandbox.run.policy import RunPolicy, SinkPolicy
from sandbox.run.server import RunningServer
from sandbox.run.sink import start_sink
from scanner.pipeline.scan_options import Progress
from scanner.probes import phase as probe_phase
from scanner.probes.egress_drain import EgressDrain
from scanner.probes.runner import ProbeOptions


@dataclass(frozen=True)
class StartedServer:
    server: RunningServer
    plan: probe_phase.ProbePlan
    restart: Callable[[], RunningServer]  # a fresh server from the installed image, same command and policy
    network: Literal["observe", "none"]
    drain: EgressDrain | None  # the sink's attempts per container, when the network is observed
    sink: SinkPolicy | None = None  # the sink container's applied policy, when the network is observed
    namespace: NetworkNamespace | None = None  # the server's network namespace, read from inside at start
    namespace_unread: str | None = None  # why it could not be read


def start(session: SandboxSession, installed: InstalledServer, command: list[str], policy: RunPolicy, *,
          network: Literal["observe", "none"], probes: ProbeOptions, progress: Progress) -> StartedServer:
    drain: EgressDrain | None = None
    sink_policy: SinkPolicy | None = None
    if network == "observe":
        progress("starting the egress sink")
        sink = start_sink(session, progress=progress, hostname=policy.hostname)
        policy = dataclasses.replace(policy, network_mode=sink.network_mode)
        drain, sink_policy = EgressDrain(sink), sink.policy()
    progress("starting the server in the sandbox")
    plan = probe_phase.prepare(probes, policy)  # canaries and the workspace seed
    server = run.start_server(session, installed.image, command, plan.policy)
    namespace, unread = _namespace(session, server)
    return StartedServer(server=server, plan=plan, network=network, drain=drain, sink=sink_policy,
                         namespace=namespace, namespace_unread=unread,
                         restart=lambda: run.start_server(session, installed.image, command, plan.policy))


def _namespace(session: SandboxSession, server: RunningServer) -> tuple[NetworkNamespace | None, str | None]:
    """The server's network namespace, or why it could not be read (a server that exited at once has none left)."""
    try:
        return network_namespace(session.client, server.container_id), None
    except ObserveError as exc:
        return None, str(exc)
