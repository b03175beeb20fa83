"""Arguments to call a tool with: valid-looking ones generated from its input schema, and the bad inputs of the error
probes. Paths point into the seeded sandbox workspace; URLs, hosts and e-mail addresses use names under `.invalid`.
Also: which tools count as read-only or destructive, and the order to probe them in."""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Any

from sandbox.run.workspace_seed import SeedManifest
from scanner.probes.model import ErrorProbeKind, ProbeKind
from scanner.probes.patterns import string_for_pattern
from scanner.probes.tooldef import annotation, input_schema, name_words, tool_name
from scanner.vocabulary import CREATING_VERBS, READ_VERBS, WRITE_VERBS

MAX_DEPTH = 8  # nesting bound for generated values ($ref cycles stop here too)
MAX_ITEMS = 3  # array length bound (minItems above it is honoured up to this many extra)
MAX_STRING_LENGTH = 10_000  # a schema's minLength is honoured up to this (the schema is untrusted)
INVALID_HOST = "probe.example.invalid"
INVALID_URL = f"https://{INVALID_HOST}/probe"
INVALID_EMAIL = f"probe@{INVALID_HOST}"
FIXED_UUID = "3f1c2a4e-8b7d-4c6e-9a5f-1d2e3f4a5b6c"
MISSING_UUID = "00000000-0000-4000-8000-000000000000"
MISSING_ID = "probe-missing-id-000000"
NOT_A_CHOICE = "probe-not-a-valid-choice"

DIR_WORDS = frozenset({"dir", "dirs", "directory", "directories", "folder", "folders", "cwd", "workdir", "root"})
PATH_WORDS = frozenset({"path", "paths", "file", "files", "filename", "filepath", "filenames"}) | DIR_WORDS
LISTING_WORDS = frozenset({"list", "search", "find", "tree", "ls", "glob", "walk", "directory", "dir", "folder"})
SOURCE_WORDS = frozenset({"source", "src", "from", "old", "input", "original"})
DEST_WORDS = frozenset({"destination", "dest", "dst", "to", "target", "new", "output", "out"})
NOT_PATH_WORDS = frozenset({
    "query", "pattern", "content", "contents", "text", "body", "message", "regex", "glob", "url", "uri", "search",
    "term", "data", "encoding", "mode", "format", "exclude", "include", "excludes", "patterns", "name", "type",
})
URL_WORDS = frozenset({"url", "uri", "urls", "uris", "endpoint", "link", "href", "webhook", "homepage"})
HOST_WORDS = frozenset({"host", "hostname", "domain", "server", "hosts", "domains"})
GIT_WORDS = frozenset({"git", "repo", "repository", "repos"})
ID_WORDS = frozenset({"id", "ids", "uuid", "key", "slug", "ref", "sha", "handle", "identifier"})
_PATH_DESCRIPTION = re.compile(r"\b(path|file|files|directory|folder|dir)\b", re.IGNORECASE)


@dataclass(frozen=True)
class ProbeArguments:
    """One planned call: its label, its arguments and what kind of probe it is."""

    label: str
    arguments: dict[str, Any]
    kind: ProbeKind
    error_probe: ErrorProbeKind | None = None
    expect_error: bool | None = None  # None: either outcome is fine
    target: str | None = None  # the argument an error probe is about


@dataclass(frozen=True)
class _Context:
    """What value generation needs besides the schema: the root (for $ref), the tool and the seed."""

    root: dict[str, Any]
    manifest: SeedManifest
    tool_words: tuple[str, ...]
    creates: bool  # the tool makes new things: paths should be new
    used_paths: list[str] = field(default_factory=list)


# ---------------------------------------------------------------------------------------------------- classification

def is_annotated_read_only(tool: dict[str, Any]) -> bool:
    return annotation(tool, "readOnlyHint") is True


def looks_read_only(tool: dict[str, Any]) -> bool:
    """Annotated read-only, or (not annotated otherwise) named with a read verb and no write verb."""
    hint = annotation(tool, "readOnlyHint")
    if hint is not None:
        return hint is True
    words = set(name_words(tool_name(tool)))
    return bool(words & READ_VERBS) and not words & WRITE_VERBS


def is_destructive(tool: dict[str, Any]) -> bool:
    """MCP semantics: a tool not annotated read-only may be destructive unless it says destructiveHint: false."""
    if is_annotated_read_only(tool):
        return False
    return annotation(tool, "destructiveHint") is not False


def may_probe(tool: dict[str, Any], *, no_destructive: bool, allow_destructive: bool = False) -> bool:
    """Whether a tool may be called: always, except under --no-destructive, which allows only tools annotated
    read-only (or a fixture probe that says allow_destructive)."""
    return not no_destructive or allow_destructive or is_annotated_read_only(tool)


def order_tools(tools: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Read-only tools (annotation or read verb) first, then the rest; the server's order within each group."""
    return sorted(tools, key=lambda tool: not looks_read_only(tool))


# ------------------------------------------------------------------------------------------------ generated arguments

def generated_probes(tool: dict[str, Any], manifest: SeedManifest) -> list[ProbeArguments]:
    """The generated probe, plus for a read-only tool given an existing file, the same call on the large file."""
    arguments = generate_arguments(tool, manifest)
    probes = [ProbeArguments(label="generated", arguments=arguments, kind="generated")]
    file_args = [key for key, value in arguments.items() if isinstance(value, str) and value in manifest.files]
    if file_args and looks_read_only(tool):
        large = {**arguments, file_args[0]: manifest.large_file}
        probes.append(ProbeArguments(label="generated: large file", arguments=large, kind="generated"))
    return probes


def generate_arguments(tool: dict[str, Any], manifest: SeedManifest) -> dict[str, Any]:
    """Valid-looking arguments for a tool: its required properties (and enough others for minProperties)."""
    schema = input_schema(tool)
    value = _value(schema, _context(tool, schema, manifest), name="", depth=0, refs=())
    return value if isinstance(value, dict) else {}


def _context(tool: dict[str, Any], schema: dict[str, Any], manifest: SeedManifest) -> _Context:
    words = tuple(name_words(tool_name(tool)))
    return _Context(
        root=schema,
        manifest=manifest,
        tool_words=words,
        creates=bool(set(words) & CREATING_VERBS),
    )


def _value(schema: Any, ctx: _Context, *, name: str, depth: int, refs: tuple[str, ...]) -> Any:
    if not isinstance(schema, dict):
        return "probe" if schema is not False else None
    if "$ref" in schema and isinstance(schema["$ref"], str):
        ref = schema["$ref"]
        target = resolve_ref(ctx.root, ref)
        if target is None or ref in refs or depth >= MAX_DEPTH:
            return _minimal(schema if target is None else target)
        merged = {**target, **{key: val for key, val in schema.items() if key != "$ref"}}
        return _value(merged, ctx, name=name, depth=depth + 1, refs=(*refs, ref))
    if depth > MAX_DEPTH:
        return _minimal(schema)
    if "const" in schema:
        return schema["const"]
    if isinstance(schema.get("enum"), list) and schema["enum"]:
        return next((item for item in schema["enum"] if item is not None), schema["enum"][0])
    if "default" in schema and not _is_path_like(name, schema):
        return schema["default"]
    examples = schema.get("examples")
    if isinstance(examples, list) and examples and not _is_path_like(name, schema):
        return examples[0]
    if "allOf" in schema and isinstance(schema["allOf"], list):
        return _value(_merge_all_of(schema), ctx, name=name, depth=depth + 1, refs=refs)
    for keyword in ("anyOf", "oneOf"):
        if isinstance(schema.get(keyword), list) and schema[keyword]:
            branch = _first_viable(schema[keyword], ctx)
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


def schema_type(schema: dict[str, Any]) -> str:
    """The schema's type (first non-null one of a list), inferred from its keywords when not given."""
    declared = schema.get("type")
    if isinstance(declared, list):
        declared = next((item for item in declared if item != "null"), declared[0] if declared else None)
    if isinstance(declared, str):
        return declared
    if "properties" in schema or "required" in schema or "additionalProperties" in schema:
        return "object"
    if "items" in schema or "prefixItems" in schema:
        return "array"
    if any(key in schema for key in ("minimum", "maximum", "exclusiveMinimum", "exclusiveMaximum", "multipleOf")):
        return "number"
    return "string"


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
    preferred: float = 0 if words & {"offset", "skip", "start", "index"} else 5 if words & {"limit", "count"} else 1
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
    if text is None and _is_path_like(name, schema, ctx.tool_words):
        text = _path_for(name, schema, ctx)
    if text is None and isinstance(schema.get("pattern"), str):
        text = string_for_pattern(schema["pattern"])
    if text is None:
        text = _named_string(words)
    return _fit_length(text, schema)


def _formatted(fmt: Any, words: set[str]) -> str | None:
    """A value for a string format (or a name that says URL, host or e-mail)."""
    by_format = {
        "date": "2024-01-15", "date-time": "2024-01-15T09:30:00Z", "time": "09:30:00Z", "duration": "PT1M",
        "email": INVALID_EMAIL, "idn-email": INVALID_EMAIL, "uri": INVALID_URL, "url": INVALID_URL,
        "iri": INVALID_URL, "uri-reference": INVALID_URL, "iri-reference": INVALID_URL, "uri-template": INVALID_URL,
        "hostname": INVALID_HOST, "idn-hostname": INVALID_HOST, "uuid": FIXED_UUID, "regex": "^probe$",
        "json-pointer": "/probe", "relative-json-pointer": "0/probe",
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
    return "probe"


def _fit_length(text: str, schema: dict[str, Any]) -> str:
    min_length, max_length = schema.get("minLength"), schema.get("maxLength")
    if isinstance(min_length, int) and len(text) < min_length:
        text = text + "x" * (min(min_length, MAX_STRING_LENGTH) - len(text))
    if isinstance(max_length, int) and len(text) > max_length:
        text = text[:max(max_length, 0)]
    return text


def _is_path_like(name: str, schema: dict[str, Any], tool_words: tuple[str, ...] = ()) -> bool:
    """A string parameter whose name (or, for a neutral name, description) says path, file, dir or folder; or a
    source/destination parameter of a tool whose name says file, path or directory (move_file(source, destination))."""
    if schema_type(schema) not in ("string", "array") or isinstance(schema.get("format"), str):
        return False
    words = set(name_words(name))
    if words & PATH_WORDS or (words & (SOURCE_WORDS | DEST_WORDS) and set(tool_words) & PATH_WORDS):
        return True
    description = schema.get("description")
    return (bool(words) and not words & NOT_PATH_WORDS and not words & URL_WORDS
            and isinstance(description, str) and bool(_PATH_DESCRIPTION.search(description)))


def _path_for(name: str, schema: dict[str, Any], ctx: _Context) -> str:
    """An existing seed path for tools that read or change things, a new one for tools that create them; the seeded
    git repository for git tools, a JSON file for JSON tools."""
    words = set(name_words(name))
    context_words = words | set(ctx.tool_words)
    names_file = bool(words & {"file", "files", "filename", "filepath", "filenames"})
    wants_dir = bool(words & DIR_WORDS) or (not names_file and bool(set(ctx.tool_words) & LISTING_WORDS))
    if words & DEST_WORDS or (ctx.creates and not words & SOURCE_WORDS):
        suffix = "" if wants_dir else ".txt"
        path = ctx.manifest.new_path(f"{_slug(ctx.tool_words)}-{name or 'arg'}-{len(ctx.used_paths) + 1}{suffix}")
    elif context_words & GIT_WORDS and not names_file:
        path = ctx.manifest.git_repo
    else:
        path = _unused(_existing_pool(ctx.manifest, wants_dir=wants_dir, json="json" in context_words), ctx.used_paths)
    ctx.used_paths.append(path)
    return path


def _existing_pool(manifest: SeedManifest, *, wants_dir: bool, json: bool) -> list[str]:
    if wants_dir:
        return [manifest.root, *manifest.dirs]
    if json:
        return [*manifest.json_files, *manifest.files]
    return [manifest.small_text_file(), *manifest.files]


def _unused(pool: list[str], used: list[str]) -> str:
    return next((candidate for candidate in pool if candidate not in used), pool[0])


def _slug(words: tuple[str, ...]) -> str:
    return "-".join(words)[:40] or "tool"


def _minimal(schema: dict[str, Any]) -> Any:
    """The smallest value of the schema's type, without following anything (cycle and depth stop)."""
    return {"object": {}, "array": [], "integer": 0, "number": 0, "boolean": False, "null": None}.get(
        schema_type(schema), "probe")


def _merge_all_of(schema: dict[str, Any]) -> dict[str, Any]:
    merged: dict[str, Any] = {key: val for key, val in schema.items() if key != "allOf"}
    for part in schema["allOf"]:
        if not isinstance(part, dict):
            continue
        for key, val in part.items():
            if key == "properties" and isinstance(val, dict):
                merged["properties"] = {**merged.get("properties", {}), **val}
            elif key == "required" and isinstance(val, list):
                merged["required"] = list(dict.fromkeys([*merged.get("required", []), *val]))
            else:
                merged.setdefault(key, val)
    return merged


def _first_viable(branches: list[Any], ctx: _Context) -> dict[str, Any]:
    """The first branch that can hold a value: an object schema that is not `not`, false or only null."""
    dict_branches = [branch for branch in branches if isinstance(branch, dict)]
    for branch in dict_branches:
        if "not" in branch or branch.get("type") == "null":
            continue
        if "$ref" in branch and resolve_ref(ctx.root, str(branch["$ref"])) is None:
            continue
        return branch
    return dict_branches[0] if dict_branches else {}


def resolve_ref(root: dict[str, Any], ref: str) -> dict[str, Any] | None:
    """Resolve a local reference ("#", "#/$defs/x", "#/definitions/x", percent- and ~-escaped); None otherwise."""
    if not ref.startswith("#"):
        return None
    node: Any = root
    pointer = ref[1:]
    if pointer and not pointer.startswith("/"):
        return None
    for part in pointer.split("/")[1:] if pointer else []:
        part = re.sub(r"%([0-9A-Fa-f]{2})", lambda match: chr(int(match.group(1), 16)), part)
        part = part.replace("~1", "/").replace("~0", "~")
        if isinstance(node, dict) and part in node:
            node = node[part]
        elif isinstance(node, list) and part.isdigit() and int(part) < len(node):
            node = node[int(part)]
        else:
            return None
    return node if isinstance(node, dict) else None


# ---------------------------------------------------------------------------------------------------- error probes

def error_probes(tool: dict[str, Any], manifest: SeedManifest) -> list[ProbeArguments]:
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
                      manifest: SeedManifest) -> ProbeArguments | None:
    required = _required(tool)
    if not required:
        return None
    target = required[0]
    arguments = {key: value for key, value in valid.items() if key != target}
    return ProbeArguments(label=f"error: missing required '{target}'", arguments=arguments, kind="error",
                          error_probe="missing_required", expect_error=True, target=target)


def _wrong_type(tool: dict[str, Any], valid: dict[str, Any], properties: dict[str, dict[str, Any]],
                manifest: SeedManifest) -> ProbeArguments | None:
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
        return ProbeArguments(label=label, arguments=arguments, kind="error", error_probe="wrong_type",
                              expect_error=True, target=target)
    return None


def wrong_type_value(schema: dict[str, Any]) -> Any:
    """A value of a type the schema does not allow, or None when it allows every candidate."""
    declared = schema.get("type")
    allowed = set(declared) if isinstance(declared, list) else {declared}
    if "number" in allowed:
        allowed.add("integer")
    candidates: list[tuple[str, Any]] = [("integer", 12345), ("string", "probe-not-a-number"),
                                         ("object", {"probe": True}), ("boolean", True)]
    if allowed & {"integer", "number"}:
        candidates = [("string", "probe-not-a-number"), *candidates]
    for type_name, value in candidates:
        if type_name not in allowed:
            return value
    return None


def json_type_name(value: Any) -> str:
    if isinstance(value, bool):
        return "boolean"
    if isinstance(value, int):
        return "integer"
    if isinstance(value, float):
        return "number"
    if isinstance(value, str):
        return "string"
    if isinstance(value, list):
        return "array"
    if isinstance(value, dict):
        return "object"
    return "null"


def _invalid_enum(tool: dict[str, Any], valid: dict[str, Any], properties: dict[str, dict[str, Any]],
                  manifest: SeedManifest) -> ProbeArguments | None:
    for target, prop in properties.items():
        choices = prop.get("enum")
        if isinstance(choices, list) and choices and all(isinstance(choice, str) for choice in choices):
            value = NOT_A_CHOICE if NOT_A_CHOICE not in choices else NOT_A_CHOICE + "-2"
            return ProbeArguments(label=f"error: invalid enum value for '{target}'", arguments={**valid, target: value},
                                  kind="error", error_probe="invalid_enum", expect_error=True, target=target)
    return None


def _unknown_value(tool: dict[str, Any], valid: dict[str, Any], properties: dict[str, dict[str, Any]],
                   manifest: SeedManifest) -> ProbeArguments | None:
    """A path or id that passes validation but names nothing: either outcome is fine, a good error is better."""
    tool_words = tuple(name_words(tool_name(tool)))
    creates = bool(set(tool_words) & CREATING_VERBS)
    for target in dict.fromkeys([*_required(tool), *properties]):
        prop = properties.get(target, {})
        if schema_type(prop) != "string" or "enum" in prop or "const" in prop:
            continue
        words = set(name_words(target))
        if _is_path_like(target, prop, tool_words) and not words & DEST_WORDS and not creates:
            value: Any = manifest.missing_path()
        elif words & ID_WORDS or target.endswith("Id"):
            value = MISSING_UUID if prop.get("format") == "uuid" or words & {"uuid", "guid"} else MISSING_ID
        else:
            continue
        return ProbeArguments(label=f"unknown value for '{target}' (does not exist)",
                              arguments={**valid, target: value}, kind="error", error_probe="unknown_value",
                              expect_error=None, target=target)
    return None

