"""What the probe runner takes (its options, its access to the sandbox) and gives back (the outcome), and the
seeding of a fresh sandbox, apart from the runner's loop in scanner/probes/runner.py."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from sandbox.run import seeding
from sandbox.run.canaries import PlantedCanaries
from sandbox.run.observe import Snapshot
from sandbox.run.observer_watch import Watch
from sandbox.run.seeding import Archive
from sandbox.run.server import RunningServer
from sandbox.run.workspace_seed import SeedManifest
from scanner.pipeline.transport import WireHealth
from scanner.probes.egress_drain import Drain
from scanner.probes.fixtures import Refusal
from scanner.probes.options import ProbeOptions
from scanner.probes.model import ProbeCall, ProbeResult
from scanner.probes.notifications import NotificationLog
from scanner.report.model import CallBehavior, Finding, ProcessSeen

if TYPE_CHECKING:
    from scanner.probes.plan import CallPlan

Restart = Callable[[], RunningServer]


@dataclass
class ProbeOutcome:
    """Everything the probe phase found; `phase.summarize` turns it into the report's probe part."""

    results: list[ProbeResult] = field(default_factory=list)
    behavior: list[CallBehavior] = field(default_factory=list)
    findings: list[Finding] = field(default_factory=list)  # P6–P8 (events); P1–P5 and B1–B6 are derived later
    refused: list[Refusal] = field(default_factory=list)
    skipped: list[str] = field(default_factory=list)  # tools not probed (--no-destructive), by name
    tools_before: list[dict[str, Any]] = field(default_factory=list)
    tools_after: list[dict[str, Any]] = field(default_factory=list)
    list_changed_notifications: int = 0
    notifications: NotificationLog = field(default_factory=NotificationLog)  # every server notification, by method
    restarts: int = 0
    looks: list[str] = field(default_factory=list)  # per sandbox, how its snapshots were taken (Watch.path)
    startup_processes: list[ProcessSeen] = field(default_factory=list)  # after listing, before the first call
    teardown_processes: list[ProcessSeen] = field(default_factory=list)  # after the last call, before EOF
    server: RunningServer | None = None  # the sandbox probing ended in (a restart replaces the first)
    server_exited: bool = False  # that server had exited before teardown began (a crash, not its ending)
    errors: list[str] = field(default_factory=list)
    seconds: float = 0.0
    ran: bool = False

    def planned(self, plan: CallPlan) -> list[ProbeCall]:
        """The plan's calls to make; what it refused, skipped or left uncalled (and why) recorded here."""
        self.refused, self.skipped = plan.refused, plan.skipped
        self.results.extend(plan.not_called)
        self.errors.extend(plan.errors)
        return plan.calls


@dataclass
class SandboxAccess:
    """What the runner needs to look at and restart the sandbox."""

    docker: docker.DockerClient
    server: RunningServer
    manifest: SeedManifest
    archives: list[Archive]  # what seeding a fresh sandbox extracts into it (ProbePlan.archives)
    canaries: PlantedCanaries
    restart: Restart
    startup_timeout: float = 60.0
    request_timeout: float = 30.0
    cpus: float = 1.0
    # B2 hook for the egress sink: given the server's container id, the attempts logged since the last drain
    # (dicts with e.g. host / sni / query / destination and first_bytes). Drained after every call.
    drain_egress: Drain | None = None
    health: WireHealth | None = None  # the listing session's wire health (a flood there names what ended it)


def seed(access: SandboxAccess, server: RunningServer, use_observer: bool = True) -> tuple[Watch, Snapshot]:
    """Fill the workspace and plant the canaries in HOME of a running sandbox while its observer starts (all before
    the server is sent anything); returns the Watch its looks go through and the baseline snapshot."""
    return seeding.seed(access.docker, server.container_id, access.archives, use_observer=use_observer,
                        opens=access.canaries.files, open_gate=server.gated)
