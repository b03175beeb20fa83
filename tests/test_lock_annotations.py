"""annotations_changed: hints read by JavaScript truthiness with the spec's defaults; safer claims are errors."""

from __future__ import annotations

from typing import Any

import pytest

from scanner.lock.annotations import compare_annotations, effective_hint, js_truthy


@pytest.mark.parametrize("value,truthy", [(None, False), (False, False), (0, False), (0.0, False), (-0.0, False),
                                          (float("nan"), False), ("", False), (True, True), (1, True), (-1, True),
                                          ("false", True), ("0", True), ([], True), ({}, True)])
def test_js_truthy(value: Any, truthy: bool) -> None:
    assert js_truthy(value) is truthy


@pytest.mark.parametrize("hint,default", [("readOnlyHint", False), ("destructiveHint", True),
                                          ("idempotentHint", False), ("openWorldHint", True)])
def test_absent_hints_take_the_spec_defaults(hint: str, default: bool) -> None:
    assert effective_hint({}, hint) is default


@pytest.mark.parametrize("old,new", [
    ({}, {"readOnlyHint": True}),
    ({"readOnlyHint": False}, {"readOnlyHint": "yes"}),
    ({}, {"destructiveHint": False}),
    ({}, {"destructiveHint": 0}),
    ({}, {"destructiveHint": None}),
    ({"openWorldHint": True}, {"openWorldHint": ""}),
    ({}, {"idempotentHint": 1}),
    (None, {"openWorldHint": False}),
])
def test_claiming_to_be_safer_is_an_error(old: Any, new: Any) -> None:
    deltas = compare_annotations(old, new)
    assert [d.severity for d in deltas] == ["error"]
    assert "claims to be safer" in deltas[0].detail


@pytest.mark.parametrize("old,new", [
    ({"readOnlyHint": True}, {"readOnlyHint": False}),
    ({"destructiveHint": False}, {}),
    ({"openWorldHint": 0}, {"openWorldHint": "false"}),  # "false" is a truthy string: now open-world
])
def test_declaring_more_risk_is_a_warning(old: Any, new: Any) -> None:
    assert [d.severity for d in compare_annotations(old, new)] == ["warning"]


@pytest.mark.parametrize("old,new", [
    ({}, {"destructiveHint": True}),
    ({"readOnlyHint": True}, {"readOnlyHint": 1}),
    ({"openWorldHint": False}, {"openWorldHint": 0}),
])
def test_same_meaning_spelled_differently_is_info(old: Any, new: Any) -> None:
    assert [d.severity for d in compare_annotations(old, new)] == ["info"]


def test_unchanged_and_title_only_give_nothing_here() -> None:
    assert compare_annotations({"readOnlyHint": True}, {"readOnlyHint": True}) == []
    assert compare_annotations({"title": "a"}, {"title": "b"}) == []  # titles are title_changed, not annotations


def test_annotations_that_are_not_an_object_are_read_as_none() -> None:
    deltas = compare_annotations({"destructiveHint": True}, "readOnly")
    assert [d.severity for d in deltas] == ["info", "warning"]


@pytest.mark.parametrize("old,new", [
    ({"destructiveHint": True}, {"destructiveHint": "false"}),
    ({}, {"destructiveHint": "no"}),
    ({"openWorldHint": True}, {"openWorldHint": "off"}),
    ({"readOnlyHint": "false"}, {"readOnlyHint": "true"}),
])
def test_safer_to_a_python_sdk_client_is_an_error(old: Any, new: Any) -> None:
    """A string hint is truthy to JavaScript but parsed by the Python SDK's model (pydantic's lax bool: "false",
    "no", "off", "0" are false; "true", "yes", "on", "1" true). `destructiveHint: "false"` was "same meaning" (info)
    while a Python host read the tool as no longer destructive."""
    deltas = compare_annotations(old, new)
    assert [d.severity for d in deltas] == ["error"] and "claims to be safer" in deltas[0].detail
