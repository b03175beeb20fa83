"""json-schema-dialect (W1): the signs of draft-04/06/07 in a tool schema, walked over schema positions only and
bounded for hostile schemas; and its findings' severity by revision."""

from __future__ import annotations

from typing import Any

import pytest

from scanner.conformance.checks import dialect_findings
from scanner.conformance.dialect import (ARRAY_ITEMS, BOOLEAN_BOUND, DEFINITIONS, DEFINITIONS_REF, MAX_DEPTH,
                                         dialect_signs)
from scanner.conformance.model import ConformanceOptions


def _tool(schema: dict[str, Any], name: str = "t") -> dict[str, Any]:
    return {"name": name, "description": "d", "inputSchema": schema}


@pytest.mark.parametrize("uri", ["http://json-schema.org/draft-07/schema#", "https://json-schema.org/draft-04/schema",
                                 "http://json-schema.org/draft-06/schema#"])
def test_an_old_declared_dialect_fires(uri: str) -> None:
    assert dialect_signs({"$schema": uri, "type": "object"}).declared == f"draft-0{uri.split('draft-0')[1][0]}"


def test_a_2020_12_declaration_is_trusted_except_for_forms_it_rejects() -> None:
    declared = {"$schema": "https://json-schema.org/draft/2020-12/schema", "definitions": {"a": {}},
                "properties": {"n": {"type": "number", "exclusiveMinimum": True}}}
    assert dialect_signs(declared).forms == [BOOLEAN_BOUND]
    assert not dialect_signs({"$schema": "https://json-schema.org/draft/2020-12/schema", "definitions": {}}).old


def test_inferred_forms_fire_anywhere_in_a_schema_position() -> None:
    schema = {"type": "object", "definitions": {"k": {"type": "string"}},
              "properties": {"k": {"$ref": "#/definitions/k"},
                             "pair": {"type": "array", "items": [{"type": "string"}, {"type": "number"}]},
                             "deep": {"anyOf": [{"type": "number", "exclusiveMaximum": False}]}}}
    assert dialect_signs(schema).forms == [DEFINITIONS, DEFINITIONS_REF, ARRAY_ITEMS, BOOLEAN_BOUND]


def test_values_and_property_names_are_not_schema_positions() -> None:
    """Near miss: `definitions` as a property name, enum/const/default/examples values shaped like old keywords,
    numeric exclusive bounds, object-form items and a $defs ref are all 2020-12."""
    schema = {"type": "object", "properties": {
        "definitions": {"type": "string"},
        "kind": {"enum": [{"definitions": {}}, {"items": []}], "const": {"exclusiveMinimum": True},
                 "default": {"$ref": "#/definitions/x"}, "examples": [{"items": [1, 2]}]},
        "n": {"type": "number", "exclusiveMinimum": 0},
        "list": {"type": "array", "items": {"$ref": "#/$defs/item"}}},
        "$defs": {"item": {"type": "string"}}}
    assert not dialect_signs(schema).old


def test_hostile_schemas_are_bounded() -> None:
    deep: dict[str, Any] = {"type": "string"}
    for _ in range(5_000):
        deep = {"type": "object", "properties": {"x": deep}}
    signs = dialect_signs(deep)
    assert signs.truncated and not signs.forms
    wide = {"type": "object", "properties": {f"p{i}": {"type": "string"} for i in range(20_000)}}
    assert dialect_signs(wide).truncated
    at_bound = {"type": "string"}
    for _ in range(MAX_DEPTH - 1):
        at_bound = {"allOf": [at_bound]}
    assert not dialect_signs(at_bound).truncated  # near miss: a deep but legal schema is read to the end
    cycle = {"$ref": "#", "properties": {"self": {"$ref": "#/definitions/self"}}}
    assert dialect_signs(cycle).forms == [DEFINITIONS_REF]  # refs are read, never followed
    assert not dialect_signs("not a schema").old and not dialect_signs(None).old


def test_findings_are_per_tool_and_schema_info_by_default_warning_for_old_forms_read_as_2020_12_in_2026() -> None:
    tools = [_tool({"$schema": "http://json-schema.org/draft-07/schema#"}, "a"), _tool({"type": "object"}, "clean"),
             {"name": "b", "inputSchema": {"type": "object"}, "outputSchema": {"definitions": {"x": {}}}}]
    findings, record = dialect_findings(tools, ConformanceOptions())
    assert [(f.rule_id, f.tool, f.severity) for f in findings] == [("W1", "a", "info"), ("W1", "b", "info")]
    assert "inputSchema declares $schema draft-07" in findings[0].message
    assert findings[1].message.startswith("outputSchema has no $schema and uses definitions")
    assert record.outcome == "violation" and record.check == "json-schema-dialect"
    later, _ = dialect_findings(tools, ConformanceOptions(spec_version="2026-07-28"))
    # A schema MAY name its dialect (2026-07-28 basic#json-schema-usage, whose own example is draft-07): a declared
    # draft-07 stays info; so does `definitions` with no $schema, which the 2020-12 it is read as still accepts
    # (deprecated). A form 2020-12 rejects, in a schema read as 2020-12, is the warning.
    assert [(f.tool, f.severity) for f in later] == [("a", "info"), ("b", "info")]
    assert "allowed" in later[0].message and "deprecated" in later[1].message
    bound = {"type": "object", "properties": {"n": {"type": "number", "minimum": 0, "exclusiveMinimum": True}}}
    declared_2020 = _tool({"$schema": "https://json-schema.org/draft/2020-12/schema", **bound}, "c")
    rejected, _ = dialect_findings([declared_2020, _tool(bound, "d")], ConformanceOptions(spec_version="2026-07-28"))
    assert [(f.tool, f.severity) for f in rejected] == [("c", "warning"), ("d", "warning")]
    assert "has no $schema" not in rejected[0].message and "rejects boolean" in rejected[1].message
    none, clean = dialect_findings([tools[1]], ConformanceOptions())
    assert none == [] and clean.outcome == "passed"
