"""Hostile input is normal input: the engine never crashes, never recurses without bound, stays fast."""

from __future__ import annotations

import time
from typing import Any

from scanner.rules.static.engine import run_rules
from scanner.rules.static.context import MAX_DEPTH


def nested(depth: int) -> dict[str, Any]:
    node: dict[str, Any] = {"type": "string"}
    for _ in range(depth):
        node = {"type": "object", "properties": {"child": node}}
    return node


def test_deeply_nested_tool_gets_a_finding_not_a_crash() -> None:
    tool = {"name": "deep_tool", "description": "x", "inputSchema": nested(5_000)}
    found = run_rules([tool])
    assert any(f.rule_id == "S3" and f"deeper than {MAX_DEPTH}" in f.message for f in found)


def test_ref_cycles_are_not_followed() -> None:
    schema = {"type": "object", "$defs": {"a": {"$ref": "#/$defs/b"}, "b": {"$ref": "#/$defs/a"}},
              "properties": {"x": {"$ref": "#/$defs/a", "description": "Cyclic."}}}
    found = run_rules([{"name": "cyclic_tool", "description": "A cyclic schema.", "inputSchema": schema}])
    assert not any(f.rule_id == "S3" and f.severity == "error" for f in found)


def test_python_level_cycle_does_not_hang() -> None:
    schema: dict[str, Any] = {"type": "object", "properties": {}}
    schema["properties"]["self"] = schema  # only possible in memory, never from JSON; still bounded
    found = run_rules([{"name": "loop_tool", "description": "Loops.", "inputSchema": schema}])
    assert any("nested deeper" in f.message for f in found)


def test_non_object_tools_and_schemas() -> None:
    tools: list[Any] = [42, "tool", None, ["a"], {"name": 7, "inputSchema": "nope"},
                        {"name": "ok_tool", "description": "d", "inputSchema": {"type": "object",
                                                                                 "properties": {"p": "str"}}}]
    found = run_rules(tools)
    s3_errors = {(f.tool, f.message) for f in found if f.rule_id == "S3" and f.severity == "error"}
    assert ("<tool #0>", "tool entry is a int, not a JSON object") in s3_errors
    assert ("<tool #4>", "inputSchema is a str, not a JSON object") in s3_errors
    assert ("ok_tool", "schema of parameter `p` is not a JSON object") in s3_errors
    assert any(f.rule_id == "S5" and f.tool == "<tool #4>" for f in found)


def test_control_characters_in_names() -> None:
    found = run_rules([{"name": "evil\x1b]8;;\x07name\r", "description": "d", "inputSchema": {"type": "object"}}])
    kinds = {f.message.split("[")[1].split("]")[0] for f in found if f.rule_id == "S8"}
    assert {"terminal-escape", "control-character"} <= kinds
    assert any(f.rule_id == "S5" and "MCP spec" in f.message for f in found)


def test_five_thousand_tools_is_linear_ish() -> None:
    tools = [{"name": f"svc_get_thing_{i}", "description": f"Thing {i}.",
              "inputSchema": {"type": "object", "properties": {"thing_id": {"type": "string"}}}}
             for i in range(5_000)]
    start = time.perf_counter()
    found = run_rules(tools)
    assert time.perf_counter() - start < 10
    assert sum(1 for f in found if f.rule_id == "S1") == 5_000


def test_huge_description_is_bounded_in_evidence() -> None:
    text = "word " * 400_000 + "\u202e"
    found = run_rules([{"name": "big_tool", "description": text, "inputSchema": {"type": "object"}}])
    assert all(f.evidence is None or len(f.evidence) < 1_000 for f in found)
    assert any(f.rule_id == "S8" for f in found)
