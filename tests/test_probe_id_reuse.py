"""Reusing the ids a server returned (pure): what is harvested from a result, what matches a parameter, and the
order that lets creators and searchers run before the getters and deleters of the same entity."""

from __future__ import annotations

import json
from typing import Any

from sandbox.run.workspace_seed import seed_manifest
from scanner.probes.call_order import order_tools
from scanner.probes.harvest import MAX_PROSE_CHARS, MAX_VALUES, harvest
from scanner.probes.id_reuse import IdPool, fill_from_pool
from scanner.probes.model import ProbeCall, result_from_call
from scanner.probes.plan import plan_calls

NOTE_ID = "0b9e3c52-6f1d-4a8e-9c3b-7d2a1e5f4c6b"


def tool(name: str, properties: dict[str, Any] | None = None, **annotations: Any) -> dict[str, Any]:
    props = properties or {}
    definition: dict[str, Any] = {"name": name, "inputSchema": {"type": "object", "properties": props,
                                                                 "required": list(props)}}
    return definition | ({"annotations": annotations} if annotations else {})


def text(value: Any) -> dict[str, Any]:
    return {"content": [{"type": "text", "text": value if isinstance(value, str) else json.dumps(value)}]}


STRING = {"type": "string"}
NOTES = [tool("get_note", {"note_id": STRING}, readOnlyHint=True), tool("delete_note", {"note_id": STRING}),
         tool("list_notes", readOnlyHint=True), tool("create_note", {"title": STRING}), tool("sum", readOnlyHint=True)]


# ---- harvesting ------------------------------------------------------------------------------------------------------

def test_ids_are_harvested_from_structured_content_json_text_prose_and_resource_links():
    result = {"structuredContent": {"note": {"id": NOTE_ID, "title": "Groceries"}, "count": 1},
              "content": [{"type": "text", "text": json.dumps({"items": [{"taskId": 42, "name": "Plan"}]})},
                          {"type": "text", "text": "Saved. project_key: PRJ-7, status: done"},
                          {"type": "resource_link", "uri": "note://0b9e", "name": "note"}]}
    found = {(h.key, h.kind, h.value, tuple(sorted(h.entities))) for h in harvest(result, "create_note")}
    assert found == {("id", "id", NOTE_ID, ("note",)), ("taskId", "id", 42, ("task",)), ("name", "name", "Plan", ("item",)),
                     ("project_key", "id", "PRJ-7", ("project",)), ("uri", "uri", "note://0b9e", ("note",))}


def test_values_naming_a_host_network_urls_control_characters_and_huge_values_are_not_harvested():
    hostile = {"id": "collector.exfil.invalid", "uri": "https://example.invalid/x", "key": "a\x1b[31mb",
               "user_id": "x" * 5_000, "uuid": True, "ref_id": 2 ** 60, "slug": "mail@host.invalid",
               "note_id": "kept-1"}
    assert [(h.key, h.value) for h in harvest(text(hostile), "t")] == [("note_id", "kept-1")]


def test_harvesting_is_bounded_in_count_depth_and_non_json_text():
    many = text({"items": [{"id": f"n{i}"} for i in range(1_000)]})
    assert len(harvest(many, "list_notes")) == MAX_VALUES
    deep: Any = {"id": "too-deep"}
    for _ in range(50):
        deep = {"child": deep}
    assert harvest(text(deep), "t") == []
    assert harvest(text("{not json, id: abc-1"), "t")[0].value == "abc-1"
    assert harvest({"content": [{"type": "text", "text": "[" * 100_000}]}, "t") == []


def test_plain_text_is_searched_for_pairs_in_its_first_whole_lines_only():
    line = "2024-01-01T00:00:01Z INFO worker-1 processed job 1 in 1 ms\n"  # no pair: the seeded log's lines
    filler = line * (MAX_PROSE_CHARS // len(line) - 2)
    assert [h.value for h in harvest(text(filler + "job_id: early-7\n" + filler * 20), "read_file")] == ["early-7"]
    assert harvest(text(filler * 2 + "job_id: late-7\n"), "read_file") == []  # past the bound: not searched
    # A line that the bound would cut is not searched at all: its value is not harvested cut short.
    cut = filler + "x" * (MAX_PROSE_CHARS - len(filler) - 20) + "\njob_id: " + "a1" * 20 + "\n"
    assert len(cut) > MAX_PROSE_CHARS > cut.index("job_id")
    assert harvest(text(cut), "read_file") == []


# ---- matching --------------------------------------------------------------------------------------------------------

def pool_of(*results: tuple[dict[str, Any], str]) -> IdPool:
    pool = IdPool()
    for result, name in results:
        pool.add(harvest(result, name))
    return pool


def call_for(definition: dict[str, Any], arguments: dict[str, Any], kind: str = "generated") -> ProbeCall:
    return ProbeCall(definition["name"], label="generated", arguments=arguments, kind=kind)  # type: ignore[arg-type]


def test_an_id_a_create_returned_fills_the_id_parameter_of_a_get_of_the_same_entity():
    pool = pool_of((text({"id": NOTE_ID}), "create_note"), (text({"id": "t-9"}), "create_task"))
    get = tool("get_note", {"note_id": STRING})
    filled = fill_from_pool(call_for(get, {"note_id": "probe"}), get, pool)
    assert filled.arguments == {"note_id": NOTE_ID} and filled.reused == {"note_id": "create_note"}
    task = tool("get_task", {"id": STRING, "verbose": {"type": "boolean"}})
    assert fill_from_pool(call_for(task, {"id": "probe", "verbose": False}), task, pool).arguments == \
        {"id": "t-9", "verbose": False}


def test_a_match_must_fit_the_schema_and_the_entity_or_the_generated_value_stays():
    pool = pool_of((text({"id": "n-1", "version_id": 7}), "create_note"))
    cases = [
        tool("get_task", {"task_id": STRING}),  # another entity
        tool("get_note", {"note_id": {"type": "string", "format": "uuid"}}),  # not a uuid
        tool("get_note", {"note_id": {"type": "string", "pattern": "^[0-9]+$"}}),  # does not match the pattern
        tool("get_note", {"note_id": {"type": "string", "enum": ["a", "b"]}}),  # the enum decides
        tool("get_note", {"note_id": {"type": "string", "pattern": "^(a+)+$"}}),  # hostile pattern: not run
        tool("get_note", {"title": STRING}),  # not an id parameter
    ]
    for definition in cases:
        name = next(iter(definition["inputSchema"]["properties"]))
        call = call_for(definition, {name: "probe"})
        assert fill_from_pool(call, definition, pool) is call, definition
    numeric = tool("get_note", {"note_id": {"type": "integer"}})
    assert fill_from_pool(call_for(numeric, {"note_id": 1}), numeric, pool_of((text({"id": "17"}), "add_note"))) \
        .arguments == {"note_id": 17}


def test_error_and_fixture_probes_and_a_creators_name_are_never_changed():
    pool = pool_of((text({"id": "n-1", "name": "Groceries"}), "create_note"))
    get = tool("get_note", {"note_id": STRING})
    for kind in ("error", "fixture"):
        call = call_for(get, {"note_id": "probe"}, kind)
        assert fill_from_pool(call, get, pool) is call
    create = tool("create_note", {"name": STRING})
    assert fill_from_pool(call_for(create, {"name": "probe"}), create, pool).arguments == {"name": "probe"}
    rename = tool("rename_note", {"name": STRING})
    assert fill_from_pool(call_for(rename, {"name": "probe"}), rename, pool).arguments == {"name": "Groceries"}


def test_the_newest_best_match_wins_and_the_pool_is_bounded():
    pool = pool_of(*[(text({"id": f"n-{i}"}), "create_note") for i in range(300)])
    assert len(pool.items) == 200
    get = tool("get_note", {"id": STRING})
    assert fill_from_pool(call_for(get, {"id": "probe"}), get, pool).arguments == {"id": "n-299"}
    pool.clear()
    assert fill_from_pool(call_for(get, {"id": "probe"}), get, pool).arguments == {"id": "probe"}


def test_the_reused_argument_is_recorded_with_the_tool_it_came_from():
    get = tool("get_note", {"note_id": STRING})
    call = fill_from_pool(call_for(get, {"note_id": "probe"}), get, pool_of((text({"id": "n-1"}), "create_note")))
    record = result_from_call(call, call_result=text("ok"), latency_ms=1.0)
    assert record.arguments == {"note_id": "n-1"} and record.reused == {"note_id": "create_note"}


# ---- ordering --------------------------------------------------------------------------------------------------------

def names(tools: list[dict[str, Any]]) -> list[str]:
    return [definition["name"] for definition in tools]


def test_creators_and_listers_run_before_getters_and_deleters_last():
    assert names(order_tools(NOTES)) == ["list_notes", "sum", "create_note", "get_note", "delete_note"]


def test_ordering_links_by_entity_only_and_is_deterministic():
    tools = [tool("delete_task", {"task_id": STRING}), tool("get_note", {"note_id": STRING}, readOnlyHint=True),
             tool("create_note", {"title": STRING}), tool("create_task", {"title": STRING}),
             tool("read_file", {"path": STRING}, readOnlyHint=True)]
    order = names(order_tools(tools))
    # get_note waits for create_note (not for create_task); delete_task for create_task; read_file stays first
    assert order == ["read_file", "create_note", "get_note", "create_task", "delete_task"]
    assert names(order_tools(list(reversed(tools))))[:2] == ["read_file", "create_task"]


def test_the_plan_still_calls_every_destructive_tool_in_the_new_order():
    plan = plan_calls(NOTES, seed_manifest(), fixtures=None, no_destructive=False, with_error_probes=False,
                      max_calls=500)
    assert [c.tool for c in plan.calls] == ["list_notes", "sum", "create_note", "get_note", "delete_note"]


def test_ordering_stays_linear_on_thousands_of_tools():
    tools = [tool(f"get_item_{i}", {"item_id": STRING}) for i in range(5_000)] + [tool("create_item")]
    order = names(order_tools(tools))
    assert order[0] == "create_item" and order[1:] == names(tools[:-1])


def test_a_process_id_is_never_filled_from_the_pool_but_an_entity_id_beside_it_is():
    # a pid a listing returned may be the server's own: sending it to a kill tool would stop the server
    pool = pool_of((text({"processId": 7, "id": "s-1"}), "start_process"))
    kill = tool("kill_process_session", {"processId": {"type": "integer"}, "id": STRING})
    filled = fill_from_pool(call_for(kill, {"processId": 4_194_304, "id": "probe"}), kill, pool)
    assert filled.arguments == {"processId": 4_194_304, "id": "s-1"}
