"""The probe plan a server starts with: this scan's canaries and workspace seed, and the run policy with the canary
variables (what creating the server needs: `planted`; the workspace seed, needed only to seed it: `completed`).
Apart from the probe phase (scanner/probes/phase.py, which imports mcp) so that what starts a server needs no MCP
client (scanner/pipeline/early_server.py starts one while the CLI imports it)."""

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
    """Complete when `seed` is made (probing off: always): what seeding and probing take. `planted` makes the part a
    server is created with (the canaries, their variables in the policy) and `completed` the rest, so the workspace
    seed can be built while the server's container is created and started; `prepare` makes both."""

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
    return completed(planted(options, policy))


def planted(options: ProbeOptions, policy: RunPolicy) -> ProbePlan:
    """Fresh canaries, and the run policy with their variables: all that creating the server needs. Not complete
    (no workspace seed yet) until `completed`; probing off: complete, with nothing, and no start gate (nothing
    seeds the server to open it: sandbox/run/start_gate.py)."""
    if not options.enabled:
        return ProbePlan(options=options, policy=dataclasses.replace(policy, start_gate=False))
    canaries = plant_canaries(HOME, RUN_UID, RUN_GID)
    with_canaries = dataclasses.replace(policy, env={**canaries.env, **policy.env})
    return ProbePlan(options=options, policy=with_canaries, canaries=canaries)


def completed(plan: ProbePlan) -> ProbePlan:
    """`planted`'s plan with the workspace seed built and the one tar seeding extracts (probing off: as it is)."""
    if plan.canaries is None:
        return plan
    workspace = build_workspace_seed(RUN_UID, RUN_GID)
    seed = rooted([(workspace.archive, WORKSPACE), (plan.canaries.home_archive, HOME)])
    return dataclasses.replace(plan, workspace=workspace, seed=seed)
