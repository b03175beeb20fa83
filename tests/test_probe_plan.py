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
