"""What the scan's client remembers of the tools it listed, as the MCP SDK's client does (docs/own-client.md §2, §3):
each tool's output schema (the last listed wins; a complete listing forgets the tools it lacks), checked against the
structured content of a call's result; and at 2026-07-28 the tools whose `x-mcp-header` annotations are invalid,
dropped from the page (a client MUST drop them).

jsonschema (with referencing, attrs and rpds: about 0.1 s of CPU) is needed only to check a call's result against its
tool's output schema: a probing scan whose listing holds one imports it (`import_validation`) in the thread where the
first call waits anyway, beside the probes' start-up record and for P10's second server (scanner/probes/phase.py),
rather than inside the first call's check; a scan that calls nothing never imports it. A check that comes first
imports it itself, or waits for that thread's import to end (Python's import lock)."""

from __future__ import annotations

import importlib
import json
import re
from itertools import islice
from typing import Any

import mcp_types

X_MCP_HEADER = "x-mcp-header"
_TOKEN = re.compile(r"[!#$%&'*+\-.^_`|~0-9A-Za-z]+")  # an RFC 9110 token: what an HTTP field name may be
_HEADER_TYPES = frozenset({"string", "integer", "boolean"})
# JSON Schema 2020-12's applicators whose values are schemas (instance data and $ref are never entered)
_ONE = frozenset({"items", "contains", "unevaluatedItems", "additionalProperties", "propertyNames",
                  "unevaluatedProperties", "not", "if", "then", "else", "contentSchema"})
_LIST = frozenset({"allOf", "anyOf", "oneOf", "prefixItems"})
_MAP = frozenset({"patternProperties", "dependentSchemas", "$defs", "definitions"})
VALIDATION_MODULES = ("jsonschema.validators", "referencing")  # what `ToolSchemas.check` imports
# Why a check could not run: jsonschema recursing past the interpreter's limit (a schema or a result nested deep, or
# a schema referring to itself). The SDK's client raises the RecursionError itself; the scan records a refusal.
TOO_DEEP = "nested too deeply to check (RecursionError)"
# The errors read for the best one to quote: the SDK's client reads them all, and a list of millions of wrong items
# (within the reader's bound: structured content is free JSON to it) cost about 10 s of CPU a million, per call.
MAX_ERRORS_READ = 1000


def has_invalid_header(input_schema: Any) -> bool:
    """Whether an `x-mcp-header` annotation in the schema is invalid: valid only on a property reached from the root
    through `properties` alone, naming a token, on a string, integer or boolean property, unique ignoring case."""
    seen: set[str] = set()
    stack: list[tuple[bool, Any]] = [(False, input_schema)]  # (reached through properties alone, below the root)
    while stack:
        on_chain, node = stack.pop()
        if not isinstance(node, dict):
            continue
        if X_MCP_HEADER in node:
            header = node[X_MCP_HEADER]
            kind = node.get("type")
            if (not on_chain or not isinstance(header, str) or not _TOKEN.fullmatch(header)
                    or not isinstance(kind, str) or kind not in _HEADER_TYPES or header.lower() in seen):
                return True
            seen.add(header.lower())
        stack.extend(_children(node, on_chain or node is input_schema))
    return False


def _children(node: dict[str, Any], chain_open: bool) -> list[tuple[bool, Any]]:
    found: list[tuple[bool, Any]] = []
    for keyword, value in node.items():
        if keyword == "properties" and isinstance(value, dict):
            found.extend((chain_open, sub) for sub in value.values())
        elif keyword in _ONE:
            found.append((False, value))
        elif keyword in _LIST and isinstance(value, list):
            found.extend((False, sub) for sub in value)
        elif keyword in _MAP and isinstance(value, dict):
            found.extend((False, sub) for sub in value.values())
    return found


class ToolSchemas:
    """The output schemas of the tools listed on one session, and their compiled validators."""

    def __init__(self) -> None:
        self._schemas: dict[str, dict[str, Any] | None] = {}
        self._validators: dict[str, Any] = {}

    def knows(self, name: str) -> bool:
        return name in self._schemas

    def absorb(self, page: mcp_types.ListToolsResult, *, modern: bool, complete: bool) -> mcp_types.ListToolsResult:
        """The page as the client keeps it (at 2026-07-28 without tools whose headers are invalid), remembered."""
        if modern:
            page.tools = [tool for tool in page.tools if not has_invalid_header(tool.input_schema)]
        for tool in page.tools:
            if tool.name in self._validators and _json(self._schemas.get(tool.name)) != _json(tool.output_schema):
                del self._validators[tool.name]
            self._schemas[tool.name] = tool.output_schema
        if complete:
            names = {tool.name for tool in page.tools}
            self._schemas = {name: s for name, s in self._schemas.items() if name in names}
            self._validators = {name: v for name, v in self._validators.items() if name in names}
        return page

    def check(self, name: str, result: mcp_types.CallToolResult) -> None:
        """RuntimeError, in the SDK's words, when the tool has an output schema its result's structured content is
        missing from or breaks, or the schema itself cannot be used."""
        schema = self._schemas.get(name)
        if schema is None:
            return
        from jsonschema import exceptions
        from referencing.exceptions import Unresolvable

        if result.structured_content is None and "structured_content" not in result.model_fields_set:
            raise RuntimeError(f"Tool {name} has an output schema but did not return structured content")
        validator = self._validator(name, schema)
        try:
            error = exceptions.best_match(islice(validator.iter_errors(result.structured_content), MAX_ERRORS_READ))
        except Unresolvable as exc:
            raise RuntimeError(f"Invalid schema for tool {name}: {exc}") from exc
        except RecursionError:  # the SDK's client fails the call too, with the RecursionError itself
            raise RuntimeError(f"Invalid structured content returned by tool {name}: {TOO_DEEP}") from None
        if error is not None:
            raise RuntimeError(f"Invalid structured content returned by tool {name}: {_described(error)}") from error

    def _validator(self, name: str, schema: dict[str, Any]) -> Any:
        from jsonschema import SchemaError
        from jsonschema.validators import validator_for
        from referencing import Registry

        if (validator := self._validators.get(name)) is not None:
            return validator
        kind = validator_for(schema)
        try:
            kind.check_schema(schema)
        except SchemaError as exc:
            raise RuntimeError(f"Invalid schema for tool {name}: {exc}") from None
        except RecursionError:  # a schema some 100 levels deep: jsonschema recurses several frames a level
            raise RuntimeError(f"Invalid schema for tool {name}: {TOO_DEEP}") from None
        validator = self._validators[name] = kind(schema, registry=Registry())
        return validator


def _described(error: Exception) -> str:
    """The validation error as the SDK words it (its str(), which quotes the instance), or, for an instance too deep
    to quote, where it broke the schema."""
    try:
        return str(error)
    except RecursionError:
        path = "/".join(str(part)[:40] for part in list(getattr(error, "absolute_path", ()))[:20])
        keyword = str(getattr(error, "validator", "?"))[:40]
        return f"the value at /{path} breaks the schema's {keyword} keyword (too deeply nested to quote)"


def checks_results(tools: list[dict[str, Any]]) -> bool:
    """Whether calling these tools (as listed, JSON) will check results against an output schema."""
    return any(isinstance(tool, dict) and tool.get("outputSchema") is not None for tool in tools)


def import_validation() -> None:
    """Import what checking a result needs (see the module)."""
    for name in VALIDATION_MODULES:
        importlib.import_module(name)


def _json(schema: dict[str, Any] | None) -> str:
    """JSON equality, not Python's (which takes true for 1); a schema too deep to write out again compares unequal
    to everything (its validator is then made again)."""
    try:
        return json.dumps(schema, sort_keys=True)
    except RecursionError:
        return f"too deep {id(schema)}"
