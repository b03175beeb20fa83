"""The probe plan (pure): read-only tools first, fixture probes replace generated ones, --no-destructive skips what
it must, error probes on request, and the call budget cuts the plan."""

from __future__ import annotations

from typing import Any

import pytest

from sandbox.run.workspace_seed import seed_manifest
from scanner.probes.fixtures import FixtureFile, FixtureProbe
from scanner.probes.plan import plan_calls

MANIFEST = seed_manifest()


def tool(name: str, **annotations: Any) -> dict[str, Any]:
    schema = {"type": "object", "properties": {"query": {"type": "string"}}, "required": ["query"]}
    return {"name": name, "inputSchema": schema, **({"annotations": annotations} if annotations else {})}


TOOLS = [tool("delete_note"), tool("search_notes", readOnlyHint=True), tool("")]


def plan(**overrides: Any):  # type: ignore[no-untyped-def]
    options: dict[str, Any] = {"fixtures": None, "no_destructive": False, "with_error_probes": False,
                               "max_calls": 500, **overrides}
    return plan_calls(TOOLS, MANIFEST, **options)


def test_read_only_tools_come_first_and_nameless_tools_are_left_out() -> None:
    calls = plan().calls
    assert [(c.tool, c.label, c.kind) for c in calls] == [("search_notes", "generated", "generated"),
                                                          ("delete_note", "generated", "generated")]
    assert calls[0].arguments == {"query": "demo"}


def test_no_destructive_skips_tools_not_annotated_read_only() -> None:
    planned = plan(no_destructive=True)
    assert [c.tool for c in planned.calls] == ["search_notes"]
    assert planned.skipped == ["delete_note"]


def test_fixture_probes_replace_generated_ones_and_may_allow_a_destructive_tool() -> None:
    fixtures = FixtureFile(probes=[FixtureProbe(tool="delete_note", args={"query": "x"}, allow_destructive=True,
                                                expect_error=True),
                                   FixtureProbe(tool="no_such_tool")])
    planned = plan(fixtures=fixtures, no_destructive=True)
    assert [(c.tool, c.kind, c.arguments, c.expect_error) for c in planned.calls] == [
        ("search_notes", "generated", {"query": "demo"}, None), ("delete_note", "fixture", {"query": "x"}, True)]
    assert [r.tool for r in planned.refused] == ["no_such_tool"] and planned.skipped == []


def test_error_probes_follow_each_tool_and_the_budget_cuts_the_plan() -> None:
    calls = plan(with_error_probes=True).calls
    kinds = [(c.tool, c.kind) for c in calls]
    assert kinds[0] == ("search_notes", "generated") and ("search_notes", "error") in kinds
    assert kinds.index(("delete_note", "generated")) > max(i for i, k in enumerate(kinds) if k == ("search_notes",
                                                                                                     "error"))
    assert all(c.error_probe is not None and c.expect_error is not False for c in calls if c.kind == "error")
    assert len(plan(with_error_probes=True, max_calls=3).calls) == 3


def test_past_the_budget_no_probe_is_made_but_every_tool_is_still_classified(monkeypatch: pytest.MonkeyPatch) -> None:
    """A 3,000-tool server planned 500 calls out of probes made for every tool (about 0.5 s of CPU): the plan is the
    same when the tools past the budget get none made, and the tools --no-destructive skips are all still named."""
    import scanner.probes.plan as planning

    made: list[str] = []
    generate = planning.generated_probes
    monkeypatch.setattr(planning, "generated_probes", lambda tool, manifest: made.append(tool["name"]) or
                        generate(tool, manifest))
    tools = [tool(f"search_{i}", readOnlyHint=True) for i in range(10)] + [tool(f"delete_{i}") for i in range(5)]
    whole = plan_calls(tools, MANIFEST, fixtures=None, no_destructive=True, with_error_probes=True, max_calls=1000)
    assert len(made) == 10  # one generated probe set per read-only tool
    made.clear()
    capped = plan_calls(tools, MANIFEST, fixtures=None, no_destructive=True, with_error_probes=True, max_calls=4)
    assert capped.calls == whole.calls[:4]
    assert capped.skipped == whole.skipped == [f"delete_{i}" for i in range(5)]
    assert 0 < len(made) < 10  # made only until the budget was reached


def test_tools_the_budget_leaves_uncalled_are_each_recorded_and_the_plan_says_so() -> None:
    """A destructive tool listed after 500 read-only ones was never called and the scan read complete: each tool
    the budget leaves out is now a not-probed record, with the error line that makes the scan incomplete."""
    tools = [tool(f"search_{i}", readOnlyHint=True) for i in range(3)] + [tool("wipe_disk")]
    capped = plan_calls(tools, MANIFEST, fixtures=None, no_destructive=False, with_error_probes=False, max_calls=3)
    assert [c.tool for c in capped.calls] == ["search_0", "search_1", "search_2"]
    assert [(r.tool, r.status) for r in capped.not_called] == [("wipe_disk", "not_probed")]
    assert "over the scan's budget of 3 calls" in (capped.not_called[0].error or "")
    assert capped.errors == ["probing stopped at its budget of 3 calls: 1 tool never called (each listed as not "
                             "probed; `scan --max-calls` raises the budget)"]


def test_a_budget_that_reaches_every_tool_records_nothing_even_when_it_cuts_probes() -> None:
    tools = [tool("search_0", readOnlyHint=True), tool("delete_0")]
    cut = plan_calls(tools, MANIFEST, fixtures=None, no_destructive=False, with_error_probes=True, max_calls=2)
    assert {c.tool for c in cut.calls} == {"search_0", "delete_0"} or len(cut.calls) == 2
    whole = plan_calls(tools, MANIFEST, fixtures=None, no_destructive=True, with_error_probes=False, max_calls=500)
    assert whole.not_called == [] and whole.errors == []  # --no-destructive's skips are a choice, not the budget
    assert whole.skipped == ["delete_0"]


def test_a_remote_plan_records_the_budget_apart_from_the_writes_it_skips() -> None:
    from scanner.probes.options import ProbeOptions
    from scanner.probes.remote_runner import remote_calls

    tools = [tool(f"search_{i}", readOnlyHint=True) for i in range(3)] + [tool("delete_0")]
    remote = remote_calls(tools, ProbeOptions(max_calls=2, error_probes=False), allow_writes=False)
    assert [c.tool for c in remote.calls] == ["search_0", "search_1"]
    assert remote.skipped == ["delete_0"]  # not annotated read-only: a live service's write, never the budget's
    assert [r.tool for r in remote.not_called] == ["search_2"] and "budget of 2 calls" in remote.errors[0]


def test_a_destructive_tool_its_fixture_allows_is_recorded_when_the_budget_cuts_it() -> None:
    """Under --no-destructive a fixture may still call a destructive tool; its calls come last (read-only tools
    first), and the budget cut them without a record or an error line: the scan read complete."""
    fixtures = FixtureFile(probes=[FixtureProbe(tool="delete_note", args={"query": "x"}, allow_destructive=True)])
    capped = plan(fixtures=fixtures, no_destructive=True, max_calls=1)
    assert [c.tool for c in capped.calls] == ["search_notes"]
    assert [(r.tool, r.status) for r in capped.not_called] == [("delete_note", "not_probed")]
    assert capped.errors and "1 tool never called" in capped.errors[0]
