"""Generated and error-probe arguments: checked against the schemas with jsonschema, not against hard-coded values."""

from __future__ import annotations

from typing import Any
from urllib.parse import urlsplit

import jsonschema
import pytest

from sandbox.run.workspace_seed import seed_manifest
from scanner.probes.arguments import is_destructive, looks_read_only, may_probe
from scanner.probes.call_order import order_tools
from scanner.probes.error_probes import error_probes
from scanner.probes.schema_reading import resolve_ref
from scanner.probes.value_generation import generate_arguments, generated_probes

MANIFEST = seed_manifest()


def tool(name: str, schema: dict[str, Any], **annotations: Any) -> dict[str, Any]:
    definition: dict[str, Any] = {"name": name, "description": f"{name} tool", "inputSchema": schema}
    if annotations:
        definition["annotations"] = annotations
    return definition


def obj(properties: dict[str, Any], required: list[str] | None = None, **extra: Any) -> dict[str, Any]:
    return {"type": "object", "properties": properties, "required": required or list(properties), **extra}


VALID_CASES: list[dict[str, Any]] = [
    obj({"name": {"type": "string", "minLength": 12, "maxLength": 20}}),
    obj({"code": {"type": "string", "pattern": "^[A-Z]{3}-\\d{4}$"}}),
    obj({"n": {"type": "integer", "minimum": 10, "maximum": 20, "multipleOf": 7}}),
    obj({"ratio": {"type": "number", "exclusiveMinimum": 0, "exclusiveMaximum": 1}}),
    obj({"limit": {"type": "integer", "maximum": 3}, "offset": {"type": "integer", "minimum": 0}}),
    obj({"mode": {"type": "string", "enum": ["fast", "slow"]}, "kind": {"const": "x"}}),
    obj({"when": {"type": "string", "format": "date-time"}, "day": {"type": "string", "format": "date"},
         "id": {"type": "string", "format": "uuid"}, "mail": {"type": "string", "format": "email"}}),
    obj({"tags": {"type": "array", "items": {"type": "string"}, "minItems": 2, "uniqueItems": True}}),
    obj({"point": obj({"x": {"type": "number"}, "y": {"type": "number"}})}),
    obj({"value": {"anyOf": [{"type": "null"}, {"type": "integer", "minimum": 5}]}}),
    obj({"value": {"oneOf": [{"not": {}}, {"type": "string", "maxLength": 3}]}}),
    obj({"cfg": {"allOf": [obj({"a": {"type": "boolean"}}), obj({"b": {"type": "string"}})]}}),
    obj({"nullable": {"type": ["null", "string"]}, "flag": {"type": "boolean"}}),
    {"type": "object", "properties": {"item": {"$ref": "#/$defs/item"}}, "required": ["item"],
     "$defs": {"item": obj({"title": {"type": "string"}, "count": {"type": "integer", "minimum": 2}})}},
    {"type": "object", "properties": {"tree": {"$ref": "#/definitions/node"}}, "required": ["tree"],
     "definitions": {"node": {"type": "object", "properties": {"children": {
         "type": "array", "items": {"$ref": "#/definitions/node"}, "minItems": 0}}}}},
    obj({"opts": {"type": "object", "properties": {"a": {"type": "string"}, "b": {"type": "string"}},
                  "minProperties": 2}}),
    obj({"pair": {"type": "array", "prefixItems": [{"type": "string"}, {"type": "integer"}], "minItems": 2}}),
    obj({"retries": {"type": "integer", "default": 3}, "lang": {"type": "string", "examples": ["de"]}}),
]


@pytest.mark.parametrize("schema", VALID_CASES)
def test_generated_arguments_satisfy_the_schema(schema: dict[str, Any]) -> None:
    arguments = generate_arguments(tool("do_thing", schema), MANIFEST)
    jsonschema.validate(arguments, schema)


def test_generated_arguments_use_default_example_and_const() -> None:
    schema = obj({"retries": {"type": "integer", "default": 7}, "lang": {"type": "string", "examples": ["de"]},
                  "kind": {"const": "exact"}})
    assert generate_arguments(tool("t", schema), MANIFEST) == {"retries": 7, "lang": "de", "kind": "exact"}


def test_only_required_properties_are_filled() -> None:
    schema = obj({"path": {"type": "string"}, "head": {"type": "integer"}, "tail": {"type": "integer"}}, ["path"])
    assert set(generate_arguments(tool("read_file", schema), MANIFEST)) == {"path"}


def test_urls_hosts_and_emails_use_invalid_names() -> None:
    schema = obj({"url": {"type": "string"}, "homepage": {"type": "string", "format": "uri"},
                  "host": {"type": "string"}, "server_ip": {"type": "string", "format": "ipv4"},
                  "contact": {"type": "string", "format": "email"}})
    arguments = generate_arguments(tool("fetch", schema), MANIFEST)
    for key in ("url", "homepage"):
        assert urlsplit(arguments[key]).hostname.endswith(".invalid")
    assert arguments["host"].endswith(".invalid")
    assert arguments["server_ip"].endswith(".invalid")  # never a literal IP
    assert arguments["contact"].endswith(".invalid")


def test_read_tools_get_existing_files_and_directories() -> None:
    read = tool("read_text_file", obj({"path": {"type": "string"}}), readOnlyHint=True)
    listing = tool("list_directory", obj({"path": {"type": "string"}}))
    assert generate_arguments(read, MANIFEST)["path"] in MANIFEST.files
    listed = generate_arguments(listing, MANIFEST)["path"]
    assert listed == MANIFEST.root or listed in MANIFEST.dirs


def test_write_tools_get_new_paths_under_the_workspace() -> None:
    write = tool("write_file", obj({"path": {"type": "string"}, "content": {"type": "string"}}))
    path = generate_arguments(write, MANIFEST)["path"]
    assert path.startswith(MANIFEST.root + "/")
    assert path not in MANIFEST.files and path not in MANIFEST.dirs


def test_move_reads_an_existing_source_and_writes_a_new_destination() -> None:
    move = tool("move_file", obj({"source": {"type": "string"}, "destination": {"type": "string"}}))
    arguments = generate_arguments(move, MANIFEST)
    assert arguments["source"] in MANIFEST.files
    assert arguments["destination"].startswith(MANIFEST.root + "/")
    assert arguments["destination"] not in MANIFEST.files


def test_path_description_on_neutral_name_counts_as_path() -> None:
    schema = obj({"target": {"type": "string", "description": "The file to open"},
                  "query": {"type": "string", "description": "Text to find in the file"}})
    arguments = generate_arguments(tool("open_thing", schema), MANIFEST)
    assert arguments["target"].startswith(MANIFEST.root)
    assert not arguments["query"].startswith("/")


def test_array_of_paths_gets_distinct_existing_files() -> None:
    schema = obj({"paths": {"type": "array", "items": {"type": "string"}, "minItems": 2}})
    paths = generate_arguments(tool("read_multiple_files", schema), MANIFEST)["paths"]
    assert len(paths) == 2 and len(set(paths)) == 2
    assert all(path in MANIFEST.files for path in paths)


def test_read_only_tool_with_a_file_also_gets_a_large_file_probe() -> None:
    read = tool("read_file", obj({"path": {"type": "string"}}), readOnlyHint=True)
    probes = generated_probes(read, MANIFEST)
    assert [probe.arguments["path"] for probe in probes][1] == MANIFEST.large_file
    write = tool("write_file", obj({"path": {"type": "string"}}))
    assert len(generated_probes(write, MANIFEST)) == 1


def test_ref_cycle_is_bounded() -> None:
    schema = {"type": "object", "properties": {"node": {"$ref": "#/$defs/node"}}, "required": ["node"],
              "$defs": {"node": obj({"next": {"$ref": "#/$defs/node"}, "id": {"type": "integer"}})}}
    arguments = generate_arguments(tool("walk", schema), MANIFEST)
    assert arguments["node"]["next"] == {}  # stopped at the cycle, not recursing forever
    assert arguments["node"]["id"] == 1


def test_resolve_ref_handles_escapes_and_rejects_remote() -> None:
    root = {"$defs": {"a/b": {"type": "string"}, "c~d": {"type": "integer"}}}
    assert resolve_ref(root, "#/$defs/a~1b") == {"type": "string"}
    assert resolve_ref(root, "#/$defs/c~0d") == {"type": "integer"}
    assert resolve_ref(root, "https://schemas.example.invalid/x.json") is None
    assert resolve_ref(root, "#/$defs/missing") is None


ERROR_SCHEMA = obj({"path": {"type": "string"}, "mode": {"type": "string", "enum": ["r", "w"]},
                    "count": {"type": "integer"}}, ["path", "mode"])


def test_error_probes_break_the_schema_in_the_way_their_label_says() -> None:
    probes = {probe.error_probe: probe for probe in error_probes(tool("read_file", ERROR_SCHEMA), MANIFEST)}
    assert set(probes) == {"missing_required", "wrong_type", "invalid_enum", "unknown_value"}
    validator = jsonschema.Draft202012Validator(ERROR_SCHEMA)
    for kind in ("missing_required", "wrong_type", "invalid_enum"):
        probe = probes[kind]
        errors = list(validator.iter_errors(probe.arguments))
        assert errors, kind
        assert probe.expect_error is True and probe.target and probe.target in probe.label
    assert {error.validator for error in validator.iter_errors(probes["missing_required"].arguments)} == {"required"}
    assert {error.validator for error in validator.iter_errors(probes["wrong_type"].arguments)} == {"type"}
    assert {error.validator for error in validator.iter_errors(probes["invalid_enum"].arguments)} == {"enum"}


def test_unknown_value_probe_passes_validation_and_names_nothing() -> None:
    probes = error_probes(tool("read_file", ERROR_SCHEMA), MANIFEST)
    unknown = next(probe for probe in probes if probe.error_probe == "unknown_value")
    jsonschema.validate(unknown.arguments, ERROR_SCHEMA)
    assert unknown.expect_error is None
    assert unknown.arguments["path"].startswith(MANIFEST.root)
    assert unknown.arguments["path"] not in MANIFEST.files


def test_unknown_id_probe_for_uuid_ids() -> None:
    schema = obj({"issue_id": {"type": "string", "format": "uuid"}})
    probes = error_probes(tool("get_issue", schema), MANIFEST)
    unknown = [probe for probe in probes if probe.error_probe == "unknown_value"]
    assert len(unknown) == 1
    jsonschema.validate(unknown[0].arguments, schema, format_checker=jsonschema.FormatChecker())
    assert unknown[0].arguments["issue_id"] != generate_arguments(tool("get_issue", schema), MANIFEST)["issue_id"]


def test_tool_without_parameters_gets_no_error_probes() -> None:
    assert error_probes(tool("ping", {"type": "object", "properties": {}}), MANIFEST) == []


def test_read_only_classification_by_annotation_and_verb() -> None:
    assert looks_read_only(tool("delete_everything", {}, readOnlyHint=True))
    assert not looks_read_only(tool("get_file", {}, readOnlyHint=False))
    assert looks_read_only(tool("listIssues", {}))
    assert not looks_read_only(tool("read_and_delete", {}))
    assert not looks_read_only(tool("frobnicate", {}))


def test_order_puts_read_only_tools_first_keeping_server_order() -> None:
    tools = [tool("write_file", {}), tool("search", {}), tool("zap", {}, readOnlyHint=True), tool("delete", {})]
    assert [t["name"] for t in order_tools(tools)] == ["search", "zap", "write_file", "delete"]


def test_destructive_classification_and_no_destructive_filter() -> None:
    annotated_read = tool("zap", {}, readOnlyHint=True)
    safe_write = tool("append_note", {}, destructiveHint=False)
    unannotated = tool("get_thing", {})
    assert not is_destructive(annotated_read)
    assert not is_destructive(safe_write)
    assert is_destructive(unannotated)  # MCP default: destructiveHint is true unless said otherwise
    assert may_probe(unannotated, no_destructive=False)
    assert not may_probe(unannotated, no_destructive=True)  # only tools *annotated* read-only
    assert not may_probe(safe_write, no_destructive=True)
    assert may_probe(annotated_read, no_destructive=True)
    assert may_probe(unannotated, no_destructive=True, allow_destructive=True)


def test_snake_case_annotations_are_read_too() -> None:
    assert looks_read_only({"name": "zap", "annotations": {"read_only_hint": True}})


def test_hostile_sizes_in_the_schema_stay_bounded() -> None:
    schema = obj({"s": {"type": "string", "minLength": 10**9}, "p": {"type": "string", "pattern": "^a{100000000}$"},
                  "l": {"type": "array", "items": {"type": "integer"}, "minItems": 10**9}})
    arguments = generate_arguments(tool("t", schema), MANIFEST)
    assert len(arguments["s"]) <= 10_000 and len(arguments["p"]) < 100 and len(arguments["l"]) <= 10


def test_deeply_nested_schema_stays_bounded() -> None:
    schema: dict[str, Any] = {"type": "string"}
    for _ in range(200):
        schema = obj({"x": schema})
    arguments = generate_arguments(tool("t", schema), MANIFEST)
    depth = 0
    while isinstance(arguments, dict) and "x" in arguments:
        arguments, depth = arguments["x"], depth + 1
    assert depth <= 20


def test_git_tools_get_the_seeded_repository_and_json_tools_a_json_file() -> None:
    git = tool("git_log", obj({"repo_path": {"type": "string"}}))
    assert generate_arguments(git, MANIFEST)["repo_path"] == MANIFEST.git_repo
    json_tool = tool("query_json", obj({"file_path": {"type": "string"}}), readOnlyHint=True)
    assert generate_arguments(json_tool, MANIFEST)["file_path"] in MANIFEST.json_files


def test_pid_parameters_get_a_pid_no_process_has() -> None:
    from scanner.probes.value_generation import NO_PROCESS_PID
    schema = obj({"pid": {"type": "number"}, "processId": {"type": "integer"}, "target_pid": {"type": "string"}})
    arguments = generate_arguments(tool("kill_process", schema), MANIFEST)
    assert arguments == {"pid": NO_PROCESS_PID, "processId": NO_PROCESS_PID, "target_pid": str(NO_PROCESS_PID)}
    assert NO_PROCESS_PID >= 2 ** 22  # over Linux's PID_MAX_LIMIT: never a live process, never init (1)
    bounded = obj({"pid": {"type": "integer", "minimum": 2, "maximum": 99}})  # the schema's bounds still win
    assert generate_arguments(tool("kill_process", bounded), MANIFEST) == {"pid": 99}


def test_near_miss_other_integers_keep_their_defaults() -> None:
    schema = obj({"timeout_ms": {"type": "integer"}, "id": {"type": "integer"}, "offset": {"type": "integer"}})
    assert generate_arguments(tool("wait_for", schema), MANIFEST) == {"timeout_ms": 1, "id": 1, "offset": 0}
