"""The probe plan a server starts with: this scan's canaries and workspace seed, and the run policy with the canary
variables. Apart from the probe phase (scanner/probes/phase.py, which imports mcp) so that what starts a server needs
no MCP client (scanner/pipeline/early_server.py starts one while the CLI imports it)."""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass

from sandbox.run.canaries import PlantedCanaries, plant_canaries
from sandbox.run.policy import HOME, RUN_GID, RUN_UID, WORKSPACE, RunPolicy
from sandbox.run.seeding import Archive, rooted
from sandbox.run.workspace_seed import WorkspaceSeed, build_workspace_seed
from scanner.probes.options import ProbeOptions


@dataclass(frozen=True)
class ProbePlan:
    options: ProbeOptions
    policy: RunPolicy  # the run policy, with the canary variables added (the user's --env wins)
    canaries: PlantedCanaries | None = None
    workspace: WorkspaceSeed | None = None
    seed: Archive | None = None  # the workspace seed and the HOME canaries in one tar, extracted at / (one exec)

    def archives(self) -> list[Archive]:
        """What seeding a server extracts into it (none when probing is off)."""
        return [] if self.seed is None else [self.seed]


def prepare(options: ProbeOptions, policy: RunPolicy) -> ProbePlan:
    """Fresh canaries and the workspace seed for this scan; nothing when probing is off."""
    if not options.enabled:
        return ProbePlan(options=options, policy=policy)
    canaries = plant_canaries(HOME, RUN_UID, RUN_GID)
    workspace = build_workspace_seed(RUN_UID, RUN_GID)
    with_canaries = dataclasses.replace(policy, env={**canaries.env, **policy.env})
    seed = rooted([(workspace.archive, WORKSPACE), (canaries.home_archive, HOME)])
    return ProbePlan(options=options, policy=with_canaries, canaries=canaries, workspace=workspace, seed=seed)
