"""Valid-looking arguments for a tool, generated from its input schema: its required properties (and enough others
for minProperties), each value within the schema's bounds. Paths point into the seeded sandbox workspace
(path_arguments); URLs, hosts and e-mail addresses use names under `.invalid`."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from sandbox.run.workspace_seed import SeedManifest
from scanner.probes.arguments import HOST_WORDS, URL_WORDS, is_pid_name, looks_read_only
from scanner.probes.described_values import described_value
from scanner.probes.model import ProbeCall
from scanner.probes.path_arguments import PathPicker, is_path_like
from scanner.probes.patterns import string_for_pattern
from scanner.probes.schema_reading import (PLAIN_WORD, first_viable, merge_all_of, minimal_value, resolve_ref,
                                           schema_type)
from scanner.probes.tooldef import input_schema, tool_name
from scanner.vocabulary import name_words

MAX_DEPTH = 8  # nesting bound for generated values ($ref cycles stop here too)
MAX_ITEMS = 3  # array length bound (minItems above it is honoured up to this many extra)
MAX_STRING_LENGTH = 10_000  # a schema's minLength is honoured up to this (the schema is untrusted)
# Values a user could type: none says probe or test (a server reading its arguments looked for that word). The hosts
# stay under `.invalid`: a remote server (`scan --url`) runs where nothing contains what it fetches.
INVALID_HOST = "docs.example.invalid"
INVALID_URL = f"https://{INVALID_HOST}/index.html"
INVALID_EMAIL = "ana@example.invalid"
FIXED_UUID = "3f1c2a4e-8b7d-4c6e-9a5f-1d2e3f4a5b6c"
# A process id no process can have: Linux caps pid_max at 2**22 (PID_MAX_LIMIT), so kill/signal tools called with
# it find nothing to stop. 1 (the default for an integer) is the container's init (docker-init), and a signal to it
# is forwarded to the server: the probe would stop the server itself.
NO_PROCESS_PID = 4_194_304



@dataclass(frozen=True)
class _Context:
    """What value generation needs besides the schema: the root (for $ref) and the paths of this call."""

    root: dict[str, Any]
    paths: PathPicker


def generated_probes(tool: dict[str, Any], manifest: SeedManifest) -> list[ProbeCall]:
    """The generated probe, plus for a read-only tool given an existing file, the same call on the large file."""
    name = tool_name(tool)
    arguments = generate_arguments(tool, manifest)
    probes = [ProbeCall(name, label="generated", arguments=arguments, kind="generated")]
    file_args = [key for key, value in arguments.items() if isinstance(value, str) and value in manifest.files]
    if file_args and looks_read_only(tool):
        large = {**arguments, file_args[0]: manifest.large_file}
        probes.append(ProbeCall(name, label="generated: large file", arguments=large, kind="generated"))
    return probes


def generate_arguments(tool: dict[str, Any], manifest: SeedManifest) -> dict[str, Any]:
    """Valid-looking arguments for a tool: its required properties (and enough others for minProperties)."""
    schema = input_schema(tool)
    value = _value(schema, _Context(root=schema, paths=PathPicker.for_tool(tool, manifest)), name="", depth=0,
                   refs=())
    return value if isinstance(value, dict) else {}


def _value(schema: Any, ctx: _Context, *, name: str, depth: int, refs: tuple[str, ...]) -> Any:
    if not isinstance(schema, dict):
        return PLAIN_WORD if schema is not False else None
    if "$ref" in schema and isinstance(schema["$ref"], str):
        ref = schema["$ref"]
        target = resolve_ref(ctx.root, ref)
        if target is None or ref in refs or depth >= MAX_DEPTH:
            return minimal_value(schema if target is None else target)
        merged = {**target, **{key: val for key, val in schema.items() if key != "$ref"}}
        return _value(merged, ctx, name=name, depth=depth + 1, refs=(*refs, ref))
    if depth > MAX_DEPTH:
        return minimal_value(schema)
    if "const" in schema:
        return schema["const"]
    if isinstance(schema.get("enum"), list) and schema["enum"]:
        return next((item for item in schema["enum"] if item is not None), schema["enum"][0])
    if "default" in schema and not is_path_like(name, schema):
        return schema["default"]
    examples = schema.get("examples")
    if isinstance(examples, list) and examples and not is_path_like(name, schema):
        return examples[0]
    if "allOf" in schema and isinstance(schema["allOf"], list):
        return _value(merge_all_of(schema), ctx, name=name, depth=depth + 1, refs=refs)
    for keyword in ("anyOf", "oneOf"):
        if isinstance(schema.get(keyword), list) and schema[keyword]:
            branch = first_viable(schema[keyword], ctx.root)
            base = {key: val for key, val in schema.items() if key != keyword}
            return _value({**base, **branch}, ctx, name=name, depth=depth + 1, refs=refs)
    return _typed_value(schema, ctx, name=name, depth=depth, refs=refs)


def _typed_value(schema: dict[str, Any], ctx: _Context, *, name: str, depth: int, refs: tuple[str, ...]) -> Any:
    kind = schema_type(schema)
    if kind == "object":
        return _object(schema, ctx, depth=depth, refs=refs)
    if kind == "array":
        return _array(schema, ctx, name=name, depth=depth, refs=refs)
    if kind == "integer":
        return _number(schema, name, integer=True)
    if kind == "number":
        return _number(schema, name, integer=False)
    if kind == "boolean":
        return False
    if kind == "null":
        return None
    return _string(schema, ctx, name=name)


def _object(schema: dict[str, Any], ctx: _Context, *, depth: int, refs: tuple[str, ...]) -> dict[str, Any]:
    declared = schema.get("properties")
    properties: dict[str, Any] = declared if isinstance(declared, dict) else {}
    listed = schema.get("required")
    required = [key for key in listed if isinstance(key, str)] if isinstance(listed, list) else []
    wanted = list(dict.fromkeys(required))
    minimum = schema.get("minProperties", 0)
    for key in properties:
        if len(wanted) >= (minimum if isinstance(minimum, int) else 0):
            break
        if key not in wanted:
            wanted.append(key)
    return {key: _value(properties.get(key, {}), ctx, name=key, depth=depth + 1, refs=refs) for key in wanted}


def _array(schema: dict[str, Any], ctx: _Context, *, name: str, depth: int, refs: tuple[str, ...]) -> list[Any]:
    prefix = schema.get("prefixItems")
    items = schema.get("items", {})
    if isinstance(items, list):  # draft-4 tuple form
        prefix, items = items, schema.get("additionalItems", {})
    prefix = prefix if isinstance(prefix, list) else []
    head = [_value(item, ctx, name=name, depth=depth + 1, refs=refs) for item in prefix]
    min_items = schema.get("minItems", 1)
    max_items = schema.get("maxItems", MAX_ITEMS)
    count = max(min_items if isinstance(min_items, int) else 1, 1)
    count = min(count, max_items if isinstance(max_items, int) else MAX_ITEMS, len(head) + MAX_ITEMS)
    values = head[:count]
    while len(values) < count:
        values.append(_value(items, ctx, name=name, depth=depth + 1, refs=refs))
    if schema.get("uniqueItems") is True:
        values = _make_unique(values)
    return values


def _make_unique(values: list[Any]) -> list[Any]:
    out: list[Any] = []
    for index, value in enumerate(values):
        if value in out and isinstance(value, str):
            value = f"{value}-{index}"
        elif value in out and isinstance(value, (int, float)) and not isinstance(value, bool):
            value = value + index
        if value not in out:
            out.append(value)
    return out


def _number(schema: dict[str, Any], name: str, *, integer: bool) -> int | float:
    low, high = _bounds(schema, integer=integer)
    words = set(name_words(name))
    preferred: float = (NO_PROCESS_PID if is_pid_name(words) else 0 if words & {"offset", "skip", "start", "index"}
                        else 5 if words & {"limit", "count"} else 1)
    value = preferred
    if low is not None and value < low:
        value = low
    if high is not None and value > high:
        value = high
    step = schema.get("multipleOf")
    if isinstance(step, (int, float)) and not isinstance(step, bool) and step > 0:
        value = _round_up(value, step)
        if high is not None and value > high:
            value -= step
    if integer:
        return int(value) if float(value).is_integer() else int(value) + 1
    return value


def _round_up(value: float, step: float) -> float:
    multiple = -(-value // step) * step
    return int(multiple) if float(multiple).is_integer() else multiple


def _bounds(schema: dict[str, Any], *, integer: bool) -> tuple[float | None, float | None]:
    gap = 1 if integer else 0.5
    low = _num(schema.get("minimum"))
    high = _num(schema.get("maximum"))
    exclusive_low, exclusive_high = schema.get("exclusiveMinimum"), schema.get("exclusiveMaximum")
    if exclusive_low is True and low is not None:  # draft 4
        low += gap
    elif _num(exclusive_low) is not None:
        low = max(low if low is not None else float("-inf"), _num(exclusive_low) + gap)  # type: ignore[operator]
    if exclusive_high is True and high is not None:
        high -= gap
    elif _num(exclusive_high) is not None:
        high = min(high if high is not None else float("inf"), _num(exclusive_high) - gap)  # type: ignore[operator]
    return low, high


def _num(value: Any) -> float | None:
    return value if isinstance(value, (int, float)) and not isinstance(value, bool) else None


def _string(schema: dict[str, Any], ctx: _Context, *, name: str) -> str:
    words = set(name_words(name))
    text = _formatted(schema.get("format"), words)
    if text is None and is_path_like(name, schema, ctx.paths.tool_words):
        text = ctx.paths.path_for(name)
    if text is None and isinstance(schema.get("pattern"), str):
        text = string_for_pattern(schema["pattern"])
    if text is None and not is_pid_name(words):
        text = described_value(schema)
    if text is None:
        text = _named_string(words)
    return _fit_length(text, schema)


def _formatted(fmt: Any, words: set[str]) -> str | None:
    """A value for a string format (or a name that says URL, host or e-mail)."""
    by_format = {
        "date": "2024-01-15", "date-time": "2024-01-15T09:30:00Z", "time": "09:30:00Z", "duration": "PT1M",
        "email": INVALID_EMAIL, "idn-email": INVALID_EMAIL, "uri": INVALID_URL, "url": INVALID_URL,
        "iri": INVALID_URL, "uri-reference": INVALID_URL, "iri-reference": INVALID_URL, "uri-template": INVALID_URL,
        "hostname": INVALID_HOST, "idn-hostname": INVALID_HOST, "uuid": FIXED_UUID, "regex": f"^{PLAIN_WORD}$",
        "json-pointer": f"/{PLAIN_WORD}", "relative-json-pointer": f"0/{PLAIN_WORD}",
        # Never a literal IP address: an .invalid name instead, even though it breaks the format.
        "ipv4": INVALID_HOST, "ipv6": INVALID_HOST,
    }
    if isinstance(fmt, str) and fmt in by_format:
        return by_format[fmt]
    if words & URL_WORDS:
        return INVALID_URL
    if words & HOST_WORDS:
        return INVALID_HOST
    if "email" in words or "mail" in words:
        return INVALID_EMAIL
    return None


def _named_string(words: set[str]) -> str:
    if is_pid_name(words):
        return str(NO_PROCESS_PID)
    if words & {"uuid", "guid"}:
        return FIXED_UUID
    if words & {"date", "day", "since", "until"}:
        return "2024-01-15"
    if words & {"query", "search", "q", "term", "keyword", "keywords"}:
        return "demo"
    if words & {"pattern", "glob"}:
        return "*.md"
    if words & {"lang", "language", "locale"}:
        return "en"
    return PLAIN_WORD


def _fit_length(text: str, schema: dict[str, Any]) -> str:
    min_length, max_length = schema.get("minLength"), schema.get("maxLength")
    if isinstance(min_length, int) and len(text) < min_length:
        text = text + "x" * (min(min_length, MAX_STRING_LENGTH) - len(text))
    if isinstance(max_length, int) and len(text) > max_length:
        text = text[:max(max_length, 0)]
    return text
