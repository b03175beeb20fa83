"""Fixture files (`--fixtures FILE`): hand-written probe calls, in a format compatible with mcp-linter's.

    {"version": 1,
     "probes": [{"tool": "read_file", "label": "read the readme", "args": {"path": "${FIXTURES_DIR}/README.md"},
                 "expect_error": false, "allow_destructive": false, "skip": false}]}

Strings in `args` expand `${FIXTURES_DIR}` (where the fixture directory is inside the sandbox; by default the
file's own directory) and `${NAME}` or `${ENV:NAME}` (the environment variable NAME; unset is an error).
`$${` is a literal `${`.
Fixture args are checked against the tool's input schema before any call; a mismatch refuses the probe, with the reason.
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from sandbox.run.workspace_seed import SeedManifest
from scanner.atomic_write import atomic_write_bytes
from scanner.errors import UsageError
from scanner.json_input import first_validation_error, read_json
from scanner.probes.value_generation import generate_arguments
from scanner.probes.tooldef import input_schema, tool_name
from sandbox.core.untrusted import cap_text, escape_json_text

FIXTURES_VERSION = 1
MAX_FIXTURES_BYTES = 4 * 1024 * 1024
_VARIABLE = re.compile(r"\$\$\{|\$\{(?:ENV:|env:)?([A-Za-z_][A-Za-z0-9_]*)\}")


class FixtureProbe(BaseModel):
    model_config = ConfigDict(extra="forbid")

    tool: str = Field(min_length=1)
    label: str = ""
    args: dict[str, Any] = Field(default_factory=dict)
    expect_error: bool = False
    allow_destructive: bool = Field(default=False, description="May run under --no-destructive.")
    skip: bool = False

    def display_label(self) -> str:
        return self.label or f"fixture: {self.tool}"


class FixtureFile(BaseModel):
    model_config = ConfigDict(extra="forbid")

    version: int = FIXTURES_VERSION
    probes: list[FixtureProbe] = Field(default_factory=list)


@dataclass(frozen=True)
class Refusal:
    """A fixture probe that will not be called, and why."""

    tool: str
    label: str
    reason: str


def load_fixtures(path: Path, *, env: Mapping[str, str], fixtures_dir: str | None = None) -> FixtureFile:
    """Read, check and expand a fixtures file. Any problem is a UsageError naming the file and what is wrong."""
    raw = read_json(path, "fixtures file", max_bytes=MAX_FIXTURES_BYTES).value
    return parse_fixtures(raw, source=str(path), env=env,
                          fixtures_dir=fixtures_dir if fixtures_dir is not None else str(path.parent.resolve()))


def parse_fixtures(raw: Any, *, source: str, env: Mapping[str, str], fixtures_dir: str) -> FixtureFile:
    """Check the structure of a parsed fixtures document and expand the variables in every probe's args."""
    try:
        fixtures = FixtureFile.model_validate(raw)
    except ValidationError as exc:
        raise UsageError(f"fixtures file {source} is malformed {first_validation_error(exc)}") from exc
    if fixtures.version != FIXTURES_VERSION:
        raise UsageError(f"fixtures file {source}: version {fixtures.version} is not supported "
                         f"(expected {FIXTURES_VERSION})")
    variables = {**env, "FIXTURES_DIR": fixtures_dir}
    expanded = []
    for index, probe in enumerate(fixtures.probes):
        try:
            args = expand(probe.args, variables)
        except KeyError as exc:
            raise UsageError(f"fixtures file {source}: probes.{index} ('{probe.display_label()}'): "
                             f"${{{exc.args[0]}}} is not set") from exc
        expanded.append(probe.model_copy(update={"args": args}))
    return fixtures.model_copy(update={"probes": expanded})


def expand(value: Any, variables: Mapping[str, str]) -> Any:
    """Expand ${NAME} in every string of a JSON value; KeyError(NAME) if a variable is not set."""
    if isinstance(value, str):
        return _VARIABLE.sub(lambda match: "${" if match.group(1) is None else variables[match.group(1)], value)
    if isinstance(value, list):
        return [expand(item, variables) for item in value]
    if isinstance(value, dict):
        return {key: expand(item, variables) for key, item in value.items()}
    return value


def schema_mismatch(args: dict[str, Any], schema: dict[str, Any]) -> str | None:
    """Why args don't satisfy the schema (the most relevant error, with where), or None when they do (jsonschema is
    imported here: a scan without probes or fixtures never loads it)."""
    import jsonschema
    from jsonschema.exceptions import SchemaError
    from referencing.exceptions import Unresolvable

    validator_class = jsonschema.validators.validator_for(schema, default=jsonschema.Draft202012Validator)
    try:
        validator_class.check_schema(schema)
    except SchemaError as exc:
        return f"the tool's input schema is itself invalid: {cap_text(exc.message, 300)}"
    try:
        error = jsonschema.exceptions.best_match(validator_class(schema).iter_errors(args))
    except Unresolvable as exc:  # remote references are never fetched
        return f"the tool's input schema has a reference that can't be resolved here: {cap_text(str(exc), 200)}"
    except RecursionError:
        return "the tool's input schema refers to itself without end"
    if error is None:
        return None
    where = "/".join(str(part) for part in error.absolute_path)
    message = cap_text(error.message, 300)
    return f"at '/{where}': {message}" if where else message


def check_fixture(probe: FixtureProbe, tools: Mapping[str, dict[str, Any]]) -> Refusal | None:
    """A Refusal when the probe can't be called: no such tool, or args that don't match its input schema."""
    tool = tools.get(probe.tool)
    if tool is None:
        return Refusal(probe.tool, probe.display_label(), f"the server has no tool named '{probe.tool}'")
    reason = schema_mismatch(probe.args, input_schema(tool))
    if reason is None:
        return None
    return Refusal(probe.tool, probe.display_label(), f"args don't match the input schema: {reason}")


def plan_fixtures(fixtures: FixtureFile, tools: list[dict[str, Any]]) -> tuple[list[FixtureProbe], list[Refusal]]:
    """Split the fixture probes into those to call and those refused; skipped probes are neither."""
    by_name = {tool_name(tool): tool for tool in tools}
    accepted: list[FixtureProbe] = []
    refused: list[Refusal] = []
    for probe in fixtures.probes:
        if probe.skip:
            continue
        refusal = check_fixture(probe, by_name)
        if refusal is None:
            accepted.append(probe)
        else:
            refused.append(refusal)
    return accepted, refused


def starter_fixtures(tools: list[dict[str, Any]], manifest: SeedManifest) -> FixtureFile:
    """A starter fixtures document: one probe per tool with generated arguments, ready to edit."""
    probes = [FixtureProbe(tool=tool_name(tool), label=f"{tool_name(tool)}: starter",
                           args=generate_arguments(tool, manifest))
              for tool in tools if tool_name(tool)]
    return FixtureFile(version=FIXTURES_VERSION, probes=probes)


def write_starter_fixtures(path: Path, tools: list[dict[str, Any]], manifest: SeedManifest, *,
                           overwrite: bool = False) -> int:
    """Write the starter file for `init-fixtures`; refuse to replace an existing file unless told. Returns the count."""
    if path.exists() and not overwrite:
        raise UsageError(f"{path} already exists; choose another file name or remove it first")
    if not path.parent.is_dir():
        raise UsageError(f"the folder of {path} does not exist")
    fixtures = starter_fixtures(tools, manifest)
    # The tool names are the server's: a bidi override or a C1 control in one is written as its JSON escape.
    text = escape_json_text(json.dumps(fixtures.model_dump(mode="json"), indent=2, ensure_ascii=False)) + "\n"
    try:
        atomic_write_bytes(path, text.encode("utf-8"), durable=False)  # whole, or not there at all
    except OSError as exc:
        raise UsageError(f"cannot write {path}: {exc.strerror or exc}") from None
    return len(fixtures.probes)
