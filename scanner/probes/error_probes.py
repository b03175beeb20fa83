"""The error probes: bad inputs that a well-behaved tool answers with a clear error (missing required, wrong type,
invalid enum) and values that pass validation but name nothing (either outcome is fine, a good error is better)."""

from __future__ import annotations

from typing import Any

from sandbox.run.workspace_seed import SeedManifest
from scanner.probes.arguments import DEST_WORDS, ID_WORDS
from scanner.probes.model import ProbeCall
from scanner.probes.path_arguments import is_path_like, tool_creates
from scanner.probes.schema_reading import json_type_name, resolve_ref, schema_type
from scanner.probes.tooldef import input_schema, tool_name
from scanner.vocabulary import name_words
from scanner.probes.value_generation import generate_arguments

# Mistakes a user could make, none saying probe (a server reading its arguments looked for that word).
MISSING_UUID = "9b2e6f14-3c7a-4d58-b1e0-5a6c7d8e9f01"
MISSING_ID = "item-7f3c2a91d4e6"
NOT_A_CHOICE = "unknown-option"
NOT_A_NUMBER = "twelve"


def error_probes(tool: dict[str, Any], manifest: SeedManifest) -> list[ProbeCall]:
    """The bad-input probes that apply to the tool: missing required, wrong type, invalid enum, unknown value."""
    valid = generate_arguments(tool, manifest)
    properties = _properties(tool)
    builders = (_missing_required, _wrong_type, _invalid_enum, _unknown_value)
    probes = [builder(tool, valid, properties, manifest) for builder in builders]
    return [probe for probe in probes if probe is not None]


def _properties(tool: dict[str, Any]) -> dict[str, dict[str, Any]]:
    schema = input_schema(tool)
    properties = schema.get("properties")
    if not isinstance(properties, dict):
        return {}
    resolved: dict[str, dict[str, Any]] = {}
    for key, prop in properties.items():
        if isinstance(prop, dict) and isinstance(prop.get("$ref"), str):
            prop = resolve_ref(schema, prop["$ref"]) or prop
        if isinstance(prop, dict):
            resolved[key] = prop
    return resolved


def _required(tool: dict[str, Any]) -> list[str]:
    required = input_schema(tool).get("required")
    return [key for key in required if isinstance(key, str)] if isinstance(required, list) else []


def _missing_required(tool: dict[str, Any], valid: dict[str, Any], properties: dict[str, dict[str, Any]],
                      manifest: SeedManifest) -> ProbeCall | None:
    required = _required(tool)
    if not required:
        return None
    target = required[0]
    arguments = {key: value for key, value in valid.items() if key != target}
    return ProbeCall(tool_name(tool), label=f"error: missing required '{target}'", arguments=arguments, kind="error",
                          error_probe="missing_required", expect_error=True, target=target)


def _wrong_type(tool: dict[str, Any], valid: dict[str, Any], properties: dict[str, dict[str, Any]],
                manifest: SeedManifest) -> ProbeCall | None:
    candidates = [*_required(tool), *properties]
    for target in dict.fromkeys(candidates):
        prop = properties.get(target)
        if prop is None or not isinstance(prop.get("type"), (str, list)):
            continue
        wrong = wrong_type_value(prop)
        if wrong is None:
            continue
        arguments = {**valid, target: wrong}
        label = f"error: wrong type for '{target}' ({json_type_name(wrong)} instead of {schema_type(prop)})"
        return ProbeCall(tool_name(tool), label=label, arguments=arguments, kind="error", error_probe="wrong_type",
                              expect_error=True, target=target)
    return None


def wrong_type_value(schema: dict[str, Any]) -> Any:
    """A value of a type the schema does not allow, or None when it allows every candidate."""
    declared = schema.get("type")
    allowed = set(declared) if isinstance(declared, list) else {declared}
    if "number" in allowed:
        allowed.add("integer")
    candidates: list[tuple[str, Any]] = [("integer", 12345), ("string", NOT_A_NUMBER),
                                         ("object", {"value": True}), ("boolean", True)]
    if allowed & {"integer", "number"}:
        candidates = [("string", NOT_A_NUMBER), *candidates]
    for type_name, value in candidates:
        if type_name not in allowed:
            return value
    return None


def _invalid_enum(tool: dict[str, Any], valid: dict[str, Any], properties: dict[str, dict[str, Any]],
                  manifest: SeedManifest) -> ProbeCall | None:
    for target, prop in properties.items():
        choices = prop.get("enum")
        if isinstance(choices, list) and choices and all(isinstance(choice, str) for choice in choices):
            value = NOT_A_CHOICE if NOT_A_CHOICE not in choices else NOT_A_CHOICE + "-2"
            return ProbeCall(tool_name(tool), label=f"error: invalid enum value for '{target}'", arguments={**valid, target: value},
                                  kind="error", error_probe="invalid_enum", expect_error=True, target=target)
    return None


def _unknown_value(tool: dict[str, Any], valid: dict[str, Any], properties: dict[str, dict[str, Any]],
                   manifest: SeedManifest) -> ProbeCall | None:
    """A path or id that passes validation but names nothing: either outcome is fine, a good error is better."""
    tool_words = tuple(name_words(tool_name(tool)))
    creates = tool_creates(tool_words)
    for target in dict.fromkeys([*_required(tool), *properties]):
        prop = properties.get(target, {})
        if schema_type(prop) != "string" or "enum" in prop or "const" in prop:
            continue
        words = set(name_words(target))
        if is_path_like(target, prop, tool_words) and not words & DEST_WORDS and not creates:
            value: Any = manifest.missing_path()
        elif words & ID_WORDS or target.endswith("Id"):
            value = MISSING_UUID if prop.get("format") == "uuid" or words & {"uuid", "guid"} else MISSING_ID
        else:
            continue
        return ProbeCall(tool_name(tool), label=f"unknown value for '{target}' (does not exist)",
                              arguments={**valid, target: value}, kind="error", error_probe="unknown_value",
                              expect_error=None, target=target)
    return None
