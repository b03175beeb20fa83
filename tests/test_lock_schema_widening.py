"""schema_widened: widenings that must fire (following sub-schemas) and near-misses that must not."""

from __future__ import annotations

from typing import Any

import pytest

from scanner.lock.schema_diff import MAX_DEPTH, compare_schemas


def obj(**properties: Any) -> dict[str, Any]:
    return {"type": "object", "properties": properties}


S = {"type": "string"}

MUST_WIDEN: list[tuple[str, Any, Any]] = [
    ("new parameter", obj(path=S), obj(path=S, notes=S)),
    ("newly required", {**obj(path=S, notes=S), "required": ["path"]},
     {**obj(path=S, notes=S), "required": ["path", "notes"]}),
    ("enum value added", obj(mode={"enum": ["read"]}), obj(mode={"enum": ["read", "write"]})),
    ("enum removed", obj(mode={"type": "string", "enum": ["read"]}), obj(mode={"type": "string"})),
    ("const removed", obj(mode={"const": "read"}), obj(mode={})),
    ("maxLength removed", obj(path={"type": "string", "maxLength": 10}), obj(path=S)),
    ("maximum loosened", obj(n={"type": "integer", "maximum": 10}), obj(n={"type": "integer", "maximum": 1000})),
    ("minimum loosened", obj(n={"type": "integer", "minimum": 0}), obj(n={"type": "integer", "minimum": -5})),
    ("minLength loosened", obj(s={"type": "string", "minLength": 3}), obj(s={"type": "string", "minLength": 0})),
    ("maxItems removed", obj(a={"type": "array", "maxItems": 5}), obj(a={"type": "array"})),
    ("draft-4 exclusiveMaximum off", obj(n={"maximum": 5, "exclusiveMaximum": True}),
     obj(n={"maximum": 5, "exclusiveMaximum": False})),
    ("uniqueItems dropped", obj(a={"type": "array", "uniqueItems": True}), obj(a={"type": "array"})),
    ("pattern removed", obj(p={"type": "string", "pattern": "^[a-z]+$"}), obj(p=S)),
    ("pattern changed", obj(p={"type": "string", "pattern": "^[a-z]+$"}), obj(p={"type": "string", "pattern": ".*"})),
    ("format removed", obj(u={"type": "string", "format": "uri"}), obj(u=S)),
    ("type widened", obj(p=S), obj(p={"type": ["string", "null"]})),
    ("integer to number", obj(n={"type": "integer"}), obj(n={"type": "number"})),
    ("type removed", obj(p=S), obj(p={})),
    ("extra properties allowed (absent)", {**obj(p=S), "additionalProperties": False}, obj(p=S)),
    ("extra properties allowed (true)", {**obj(p=S), "additionalProperties": False},
     {**obj(p=S), "additionalProperties": True}),
    ("extra properties allowed (schema)", {**obj(p=S), "additionalProperties": False},
     {**obj(p=S), "additionalProperties": {"type": "string"}}),
    ("additionalProperties schema loosened", {**obj(), "additionalProperties": {"type": "string", "maxLength": 5}},
     {**obj(), "additionalProperties": {"type": "string"}}),
    ("pattern property added", obj(), {**obj(), "patternProperties": {"^x-": S}}),
    ("$ref changed", obj(p={"$ref": "#/$defs/Safe"}), obj(p={"$ref": "#/$defs/Anything"})),
    ("anyOf branch added", obj(p={"anyOf": [S]}), obj(p={"anyOf": [S, {"type": "object"}]})),
    ("oneOf removed", obj(p={"oneOf": [S, {"type": "integer"}]}), obj(p={})),
    ("allOf added", obj(p=S), obj(p={"allOf": [S]})),
    ("if changed", obj(p={"if": {"const": "a"}, "then": {"maxLength": 1}}),
     obj(p={"if": {"const": "b"}, "then": {"maxLength": 1}})),
    ("not changed", obj(p={"not": {"const": "rm -rf"}}), obj(p={"not": {"const": "x"}})),
    ("nested enum (follows properties)", obj(opts=obj(mode={"enum": ["a"]})), obj(opts=obj(mode={"enum": ["a", "b"]}))),
    ("array items limit removed", obj(a={"type": "array", "items": {"type": "string", "maxLength": 9}}),
     obj(a={"type": "array", "items": S})),
    ("anyOf branch widened inside", obj(p={"anyOf": [obj(x=S)]}), obj(p={"anyOf": [obj(x=S, y=S)]})),
    ("$defs content widened", {**obj(p={"$ref": "#/$defs/P"}), "$defs": {"P": obj(a=S)}},
     {**obj(p={"$ref": "#/$defs/P"}), "$defs": {"P": obj(a=S, b=S)}}),
    ("prefixItems shortened", obj(t={"prefixItems": [S, S]}), obj(t={"prefixItems": [S]})),
    ("schema becomes anything", obj(p=S), True),
    ("then branch removed", obj(p={"if": {"const": "a"}, "then": {"maxLength": 1}}), obj(p={"if": {"const": "a"}})),
    # oneOf accepts what exactly one branch matches: strings over 100 matched one branch, the rest both (refused);
    # a narrower second branch lets strings of 1..100 characters through.
    ("oneOf branch narrowed", obj(p={"oneOf": [S, {"type": "string", "maxLength": 100}]}),
     obj(p={"oneOf": [S, {"type": "string", "maxLength": 0}]})),
    ("oneOf branch given a type", obj(p={"oneOf": [{"minimum": 5}, {}]}),
     obj(p={"oneOf": [{"minimum": 5}, {"type": "integer"}]})),
    ("contains narrowed under maxContains", obj(a={"type": "array", "contains": S, "maxContains": 1}),
     obj(a={"type": "array", "contains": {"type": "string", "maxLength": 1}, "maxContains": 1})),
    ("multipleOf loosened", obj(n={"type": "integer", "multipleOf": 4}), obj(n={"type": "integer", "multipleOf": 2})),
    ("multipleOf to a non-multiple", obj(n={"multipleOf": 2}), obj(n={"multipleOf": 3})),
    ("limit no longer a number", obj(s={"type": "string", "maxLength": 4}),
     obj(s={"type": "string", "maxLength": "4"})),
    ("$anchor moved to a looser schema",
     {**obj(p={"$ref": "#p"}), "$defs": {"tight": {"$anchor": "p", "maxLength": 3}, "loose": {}}},
     {**obj(p={"$ref": "#p"}), "$defs": {"tight": {"maxLength": 3}, "loose": {"$anchor": "p"}}}),
    ("$id rebases references", {**obj(p={"$ref": "defs.json"}), "$id": "https://a.invalid/s/"},
     {**obj(p={"$ref": "defs.json"}), "$id": "https://b.invalid/s/"}),
    ("$schema dialect changed", {"$schema": "http://json-schema.org/draft-04/schema#", **obj(n={"maximum": 5})},
     {"$schema": "https://json-schema.org/draft/2020-12/schema", **obj(n={"maximum": 5})}),
]

MUST_NOT_WIDEN: list[tuple[str, Any, Any]] = [
    ("identical", obj(p=S), obj(p=S)),
    ("parameter description only", obj(p={"type": "string", "description": "a"}),
     obj(p={"type": "string", "description": "b"})),
    ("maxLength tightened", obj(p={"type": "string", "maxLength": 10}), obj(p={"type": "string", "maxLength": 5})),
    ("minimum raised", obj(n={"minimum": 0}), obj(n={"minimum": 1})),
    ("enum value removed", obj(m={"enum": ["a", "b"]}), obj(m={"enum": ["a"]})),
    ("no longer required", {**obj(p=S), "required": ["p"]}, obj(p=S)),
    ("number to integer", obj(n={"type": "number"}), obj(n={"type": "integer"})),
    ("type narrowed", obj(p={"type": ["string", "null"]}), obj(p=S)),
    ("extra properties forbidden", obj(p=S), {**obj(p=S), "additionalProperties": False}),
    ("parameter removed", obj(p=S, q=S), obj(p=S)),
    ("pattern added", obj(p=S), obj(p={"type": "string", "pattern": "^a$"})),
    ("limit respelled", obj(n={"maximum": 10}), obj(n={"maximum": 10.0})),
    ("key order", {"type": "object", "properties": {"a": S, "b": S}},
     {"properties": {"b": S, "a": S}, "type": "object"}),
    ("enum reordered", obj(m={"enum": ["a", "b"]}), obj(m={"enum": ["b", "a"]})),
    ("default changed", obj(p={"type": "string", "default": "a"}), obj(p={"type": "string", "default": "b"})),
    ("anyOf branch narrowed", obj(p={"anyOf": [S, {"type": "string", "maxLength": 100}]}),
     obj(p={"anyOf": [S, {"type": "string", "maxLength": 0}]})),
    ("contains narrowed without maxContains", obj(a={"type": "array", "contains": S}),
     obj(a={"type": "array", "contains": {"type": "string", "maxLength": 1}})),
    ("multipleOf tightened", obj(n={"multipleOf": 2}), obj(n={"multipleOf": 4})),
    ("multipleOf tightened (fractions)", obj(n={"multipleOf": 0.5}), obj(n={"multipleOf": 1.5})),
    ("multipleOf added", obj(n={"type": "integer"}), obj(n={"type": "integer", "multipleOf": 3})),
]


@pytest.mark.parametrize("label,old,new", MUST_WIDEN, ids=[c[0] for c in MUST_WIDEN])
def test_widening_fires(label: str, old: Any, new: Any) -> None:
    effects = [d.effect for d in compare_schemas(old, new)]
    assert "widened" in effects, label


@pytest.mark.parametrize("label,old,new", MUST_NOT_WIDEN, ids=[c[0] for c in MUST_NOT_WIDEN])
def test_near_miss_does_not_fire(label: str, old: Any, new: Any) -> None:
    effects = [d.effect for d in compare_schemas(old, new)]
    assert "widened" not in effects, label


def test_text_and_structure_are_told_apart() -> None:
    deltas = compare_schemas(obj(p={"type": "string", "description": "a", "maxLength": 5}),
                             obj(p={"type": "string", "description": "b"}))
    assert {(d.effect, d.path) for d in deltas} == {("text", "/properties/p/description"),
                                                    ("widened", "/properties/p/maxLength")}


def test_path_names_the_nested_parameter() -> None:
    deltas = compare_schemas(obj(opts=obj(mode={"enum": ["a"]})), obj(opts=obj(mode={"enum": ["a", "b"]})))
    assert [(d.effect, d.path) for d in deltas] == [("widened", "/properties/opts/properties/mode/enum")]


def _nested(depth: int, leaf: Any) -> Any:
    schema: Any = leaf
    for _ in range(depth):
        schema = {"type": "object", "properties": {"x": schema}}
    return schema


def test_deep_schemas_are_bounded_and_still_compared() -> None:
    depth = MAX_DEPTH * 3
    assert compare_schemas(_nested(depth, S), _nested(depth, S)) == []
    deltas = compare_schemas(_nested(depth, S), _nested(depth, {"type": "integer"}))
    assert [d.effect for d in deltas] == ["widened"] and "compared as a whole" in deltas[0].detail


def test_hostile_values_do_not_crash() -> None:
    weird = [None, True, False, 3, "str", [1, 2], {"type": 5}, {"properties": []}, {"required": "x"},
             {"enum": "x"}, {"anyOf": {}}, {"items": [S]}, {"maximum": "big"}]
    for old in weird:
        for new in weird:
            compare_schemas(old, new)  # every pair returns a list of deltas, never raises
    assert compare_schemas({"maximum": "big"}, {"maximum": "bigger"})[0].effect == "changed"
