"""What the rules read: tools/list, prompts and instructions, normalised once into bounded, typed views."""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from functools import cached_property
from typing import Any

from scanner.rules.static.text import words
from scanner.tokens import tokens_for_chars
from scanner.vocabulary import name_tokens, verb_group

MAX_DEPTH = 64
MAX_NODES_PER_ITEM = 50_000


@dataclass(frozen=True)
class Param:
    name: str
    schema: Any
    required: bool

    @property
    def is_object(self) -> bool:
        return isinstance(self.schema, dict)

    @property
    def description(self) -> str:
        value = self.schema.get("description") if isinstance(self.schema, dict) else None
        return value.strip() if isinstance(value, str) else ""


@dataclass(frozen=True)
class Walk:
    """Every string of a JSON value (keys included), and whether the walk hit a bound; with each string's path
    (`strings`) worked out only when asked for (S8 names where a hit sits: most tools have none)."""

    texts: list[str]
    too_deep: bool
    too_many_nodes: bool
    chars: int
    value: Any = field(default=None, repr=False, compare=False)
    root: str = ""

    @cached_property
    def strings(self) -> list[tuple[str, str]]:
        """(path, text) of every string, in the order of `texts`."""
        paths: list[str] = []
        _walk(self.value, self.root, paths)
        return list(zip(paths, self.texts))


@dataclass
class ToolView:
    index: int
    raw: Any
    name: str
    name_is_string: bool
    title: str
    description: str
    has_description: bool
    schema: Any
    params: list[Param]
    annotations: dict[str, Any] | None
    walk: Walk
    json_chars: int
    json_chars_exact: bool = True  # json_chars is the compact JSON's length (not the walk's count, for a non-JSON value)
    tokens: list[str] = field(default_factory=list)
    verb: str | None = None
    capabilities: dict[str, str] | None = None  # filled once by S11's detector, shared by S12 and S13

    @cached_property
    def description_words(self) -> list[str]:
        """`words(description)`, split once for every rule that reads them (S1, S4, S11): not to be changed."""
        return words(self.description)

    @property
    def estimated_tokens(self) -> int:
        return tokens_for_chars(self.json_chars)

    @property
    def json_tokens(self) -> int | None:
        """scanner.tokens.json_tokens(raw), from the length already measured; None when it was not JSON."""
        return tokens_for_chars(self.json_chars) if self.json_chars_exact else None


@dataclass
class LintContext:
    tools: list[ToolView]
    prompts: list[Any]
    instructions: str | None
    server_info: dict[str, Any]
    payload_bytes: int
    server_walk: Walk

    @property
    def total_tokens(self) -> int:
        return sum(t.estimated_tokens for t in self.tools)


def walk_json(value: Any, root: str = "") -> Walk:
    """Collect strings iteratively, never deeper than MAX_DEPTH nor over MAX_NODES_PER_ITEM nodes."""
    return _walk(value, root, None)


def _walk(value: Any, root: str, paths: list[str] | None) -> Walk:
    """The walk, and each string's path appended to `paths` unless it is None."""
    texts: list[str] = []
    stack: list[tuple[Any, str, int]] = [(value, root, 0)]
    too_deep = False
    nodes = 0
    chars = 0
    while stack:
        item, path, depth = stack.pop()
        nodes += 1
        if nodes > MAX_NODES_PER_ITEM:
            return Walk(texts, too_deep, True, chars, value, root)
        if isinstance(item, str):
            texts.append(item)
            if paths is not None:
                paths.append(path)
            chars += len(item) + 2
        elif isinstance(item, dict):
            if depth >= MAX_DEPTH:
                too_deep = True
                continue
            for key, child in reversed(list(item.items())):
                key_text = str(key)
                child_path = "" if paths is None else f"{path}.{key_text}" if path else key_text
                texts.append(key_text)
                if paths is not None:
                    paths.append(f"{child_path}(key)")
                chars += len(key_text) + 4
                stack.append((child, child_path, depth + 1))
        elif isinstance(item, list):
            if depth >= MAX_DEPTH:
                too_deep = True
                continue
            for position in range(len(item) - 1, -1, -1):
                stack.append((item[position], "" if paths is None else f"{path}[{position}]", depth + 1))
                chars += 1
        else:
            chars += len(str(item))
    return Walk(texts, too_deep, False, chars, value, root)


def _compact_chars(value: Any) -> int | None:
    """The length of the value as compact JSON (as scanner.tokens counts it); None when it is not JSON."""
    try:
        return len(json.dumps(value, separators=(",", ":"), ensure_ascii=False))
    except (RecursionError, ValueError, TypeError):
        return None


def _params(schema: Any) -> list[Param]:
    if not isinstance(schema, dict):
        return []
    properties = schema.get("properties")
    if not isinstance(properties, dict):
        return []
    required_raw = schema.get("required")
    required = {r for r in required_raw if isinstance(r, str)} if isinstance(required_raw, list) else set()
    return [Param(str(name), sub, str(name) in required) for name, sub in properties.items()]


def _text(value: Any) -> str:
    return value if isinstance(value, str) else ""


def tool_view(index: int, raw: Any) -> ToolView:
    walk = walk_json(raw)
    json_chars = _compact_chars(raw)
    obj = raw if isinstance(raw, dict) else {}
    raw_name = obj.get("name")
    name_is_string = isinstance(raw_name, str) and raw_name != ""
    name = raw_name if name_is_string else f"<tool #{index}>"
    annotations = obj.get("annotations")
    schema = obj.get("inputSchema", None)
    view = ToolView(
        index=index,
        raw=raw,
        name=name,
        name_is_string=name_is_string,
        title=_text(obj.get("title")) or _text(annotations.get("title") if isinstance(annotations, dict) else None),
        description=_text(obj.get("description")).strip(),
        has_description=isinstance(obj.get("description"), str) and bool(obj["description"].strip()),
        schema=schema,
        params=_params(schema),
        annotations=annotations if isinstance(annotations, dict) else None,
        walk=walk,
        json_chars=walk.chars if json_chars is None else json_chars,
        json_chars_exact=json_chars is not None,
    )
    view.tokens = name_tokens(name) if name_is_string else []
    view.verb = verb_group(view.tokens)
    return view


def build_context(
    tools: list[Any],
    prompts: list[Any] | None = None,
    instructions: str | None = None,
    server_info: dict[str, Any] | None = None,
    payload_bytes: int | None = None,
    resources: list[Any] | None = None,
    resource_templates: list[Any] | None = None,
) -> LintContext:
    """Normalise a tools/list result (and optional prompts, instructions, serverInfo, resources and resource
    templates: their names, titles and descriptions reach the model too, so S8 reads them) for the rules."""
    views = [tool_view(i, raw) for i, raw in enumerate(tools)]
    server_side: dict[str, Any] = {"prompts": prompts or [], "instructions": instructions or "",
                                   "serverInfo": server_info or {}, "resources": resources or [],
                                   "resourceTemplates": resource_templates or []}
    if payload_bytes is None:
        payload_bytes = sum(v.json_chars for v in views) + 12
    return LintContext(
        tools=views,
        prompts=list(prompts or []),
        instructions=instructions,
        server_info=dict(server_info or {}),
        payload_bytes=payload_bytes,
        server_walk=walk_json(server_side),
    )
