"""The probe plan: which calls the probe phase makes, in which order. Read-only tools first; per tool its
generated (or hand-written fixture) probes, then its error probes; tools --no-destructive rules out are skipped, and
tools that require task-augmented execution (`execution.taskSupport: "required"`) are not called plainly: they are
listed in `needs_tasks`, reported as not probed (a plain call would fail by design, which is no fault of theirs)."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from sandbox.run.workspace_seed import SeedManifest
from scanner.probes.arguments import may_probe
from scanner.probes.call_order import order_tools
from scanner.probes.error_probes import error_probes
from scanner.probes.fixtures import FixtureFile, Refusal, plan_fixtures
from scanner.probes.model import ProbeCall, ProbeResult, result_not_probed
from scanner.probes.tooldef import tool_name
from scanner.probes.value_generation import generated_probes


@dataclass
class CallPlan:
    calls: list[ProbeCall] = field(default_factory=list)
    refused: list[Refusal] = field(default_factory=list)  # fixture probes that were not accepted, and why
    skipped: list[str] = field(default_factory=list)  # tools not probed (--no-destructive), by name
    needs_tasks: list[str] = field(default_factory=list)  # tools that accept only task-augmented calls, by name
    candidates: list[str] = field(default_factory=list)  # tools the plan would call, budget aside, in call order
    not_called: list[ProbeResult] = field(default_factory=list)  # a record per tool needing tasks or over budget
    errors: list[str] = field(default_factory=list)  # the budget's line when it left tools uncalled

    def record_uncalled(self, candidates: list[str], max_calls: int) -> None:
        """`not_called` and `errors` once `calls` is final: a record per tool that needs tasks, and per one among
        `candidates` no call reaches (the budget's)."""
        over, self.errors = budget_records(candidates, self.calls, max_calls)
        self.not_called = [*(result_not_probed(name, NEEDS_TASKS) for name in self.needs_tasks), *over]


OVER_BUDGET = "not probed: over the scan's budget of {} calls (`scan --max-calls` raises it)"
NEEDS_TASKS = ("not probed: needs tasks (execution.taskSupport is \"required\"; the scanner does not call tools "
               "as tasks)")


def requires_tasks(tool: dict[str, Any]) -> bool:
    """Whether the tool accepts only task-augmented calls (MCP tasks: `execution.taskSupport: "required"`)."""
    execution = tool.get("execution")
    return isinstance(execution, dict) and execution.get("taskSupport") == "required"


def plan_calls(tools: list[dict[str, Any]], manifest: SeedManifest, *, fixtures: FixtureFile | None,
               no_destructive: bool, with_error_probes: bool, max_calls: int) -> CallPlan:
    """Read-only tools first; per tool its generated (or fixture) probes, then its error probes; at most max_calls."""
    plan = CallPlan()
    fixture_calls: dict[str, list[ProbeCall]] = {}
    allowed: dict[str, bool] = {}
    if fixtures is not None:
        accepted, plan.refused = plan_fixtures(fixtures, tools)
        for probe in accepted:
            fixture_calls.setdefault(probe.tool, []).append(ProbeCall(
                tool=probe.tool, label=probe.display_label(), arguments=probe.args, kind="fixture",
                expect_error=True if probe.expect_error else None))
            allowed[probe.tool] = allowed.get(probe.tool, False) or probe.allow_destructive
    for tool in order_tools(tools):
        name = tool_name(tool)
        if not name:
            continue
        if requires_tasks(tool):
            plan.needs_tasks.append(name)
            continue
        if not may_probe(tool, no_destructive=no_destructive):
            if fixture_calls.get(name) and allowed.get(name):
                plan.candidates.append(name)  # called by its fixture: the budget may still leave it out
                plan.calls.extend(fixture_calls[name])
            else:
                plan.skipped.append(name)
            continue
        plan.candidates.append(name)
        if len(plan.calls) >= max_calls:
            continue  # past the cap no probe is made (cut below anyway), but every tool is still classified above
        # Hand-written probes replace the generated ones.
        plan.calls.extend(fixture_calls[name] if name in fixture_calls else generated_probes(tool, manifest))
        if with_error_probes:
            plan.calls.extend(error_probes(tool, manifest))
    plan.calls = plan.calls[:max_calls]
    plan.record_uncalled(plan.candidates, max_calls)
    return plan


def budget_records(candidates: list[str], calls: list[ProbeCall], max_calls: int) -> tuple[list[ProbeResult],
                                                                                         list[str]]:
    """A not-probed record for each tool among `candidates` that no call in `calls` reaches (the call budget left
    it out), and the scan's error line for them: their behaviour was never seen, so the scan is incomplete."""
    called = {call.tool for call in calls}
    unreached = [name for name in candidates if name not in called]
    if not unreached:
        return [], []
    records = [result_not_probed(name, OVER_BUDGET.format(max_calls)) for name in unreached]
    return records, [f"probing stopped at its budget of {max_calls} calls: {len(unreached)} "
                     f"tool{'' if len(unreached) == 1 else 's'} never called (each listed as not probed; "
                     f"`scan --max-calls` raises the budget)"]
