"""Stage 5: run the installed server in the sandbox: the egress sink first (in "observe" mode), then the probe
plan's canaries and workspace seed, then the server under the run policy (checked as applied by the engine)."""

from __future__ import annotations

import dataclasses
from collections.abc import Callable
from dataclasses import dataclass
from typing import Literal

from sandbox.core.session import SandboxSession
from sandbox.install.request import InstalledServer
from sandbox.run import server as run
from sandbox.run.policy import RunPolicy
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


def start(session: SandboxSession, installed: InstalledServer, command: list[str], policy: RunPolicy, *,
          network: Literal["observe", "none"], probes: ProbeOptions, progress: Progress) -> StartedServer:
    drain: EgressDrain | None = None
    if network == "observe":
        progress("starting the egress sink")
        sink = start_sink(session, progress=progress, hostname=policy.hostname)
        policy = dataclasses.replace(policy, network_mode=sink.network_mode)
        drain = EgressDrain(sink)
    progress("starting the server in the sandbox")
    plan = probe_phase.prepare(probes, policy)  # canaries and the workspace seed
    server = run.start_server(session, installed.image, command, plan.policy)
    return StartedServer(server=server, plan=plan, network=network, drain=drain,
                         restart=lambda: run.start_server(session, installed.image, command, plan.policy))
