"""Reusing the identifiers the server returned earlier in the session: an id from a create or search call is the best
argument for a get, an update or a delete of the same entity.

`IdPool` keeps what `harvest` found in successful results (bounded; emptied when the sandbox restarts, since a fresh
server knows none of them). `fill_from_pool` puts the best match into the id-like parameters of a generated probe,
just before it is sent; a parameter with no match keeps its generated value. A match needs the same sort of
identifier (id, name, uri), an entity that agrees (`note_id` ← the `id` create_note returned; never a task's id for
a note), and a value the parameter's schema accepts (type, format uuid, length, a simple pattern). Fixture and error
probes are never changed: their arguments are chosen on purpose."""

from __future__ import annotations

import re
from dataclasses import dataclass, field, replace
from typing import Any

from scanner.probes.arguments import is_pid_name
from scanner.probes.call_order import MAKING_VERBS, entity_words
from scanner.probes.harvest import Harvested, id_kind
from scanner.probes.model import ProbeCall
from scanner.probes.schema_reading import schema_type
from scanner.probes.tooldef import input_schema, tool_name
from scanner.vocabulary import name_words

MAX_POOL = 200
MAX_PATTERN = 500
UUID_TEXT = re.compile(r"[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}")
_NESTED_QUANTIFIER = re.compile(r"[+*}?]\)*[+*{]")  # (a+)+ and the like: not run against a server's value


@dataclass
class IdPool:
    """The identifiers harvested so far in this server session, oldest first (at most MAX_POOL, newest kept)."""

    items: list[Harvested] = field(default_factory=list)

    def add(self, found: list[Harvested]) -> None:
        known = {(item.kind, str(item.value)) for item in self.items}
        for item in found:
            if (item.kind, str(item.value)) not in known:
                known.add((item.kind, str(item.value)))
                self.items.append(item)
        del self.items[:-MAX_POOL]

    def clear(self) -> None:
        self.items.clear()

    def best(self, param: str, schema: Any, tool_entities: frozenset[str]) -> tuple[Harvested, Any] | None:
        """The best harvested value for a parameter and the value as its schema wants it; None when none fits."""
        kind = id_kind(param)
        if kind is None or not isinstance(schema, dict) or "enum" in schema or "const" in schema:
            return None
        wanted = entity_words(param) or tool_entities
        ranked: list[tuple[int, int, Harvested, Any]] = []
        for seq, item in enumerate(self.items):
            score = _score(item, param, kind, wanted)
            value = fitted(item.value, schema) if score else None
            if value is not None:
                ranked.append((score, seq, item, value))
        if not ranked:
            return None
        _, _, item, value = max(ranked, key=lambda entry: (entry[0], entry[1]))
        return item, value


def _score(item: Harvested, param: str, kind: str, wanted: frozenset[str]) -> int:
    """0: no match; higher is better (same entity, same key)."""
    if item.kind != kind:
        return 0
    if item.entities and wanted:
        if not item.entities & wanted:
            return 0
        score = 3
    else:
        score = 1
    return score + (2 if _normal(item.key) == _normal(param) else 0)


def _normal(key: str) -> str:
    return re.sub(r"[^a-z0-9]", "", key.lower())


def fitted(value: str | int, schema: dict[str, Any]) -> Any:
    """The value as the schema takes it (a string, an integer, a one-item array), or None when it does not fit."""
    kind = schema_type(schema)
    if kind == "array":
        items = schema.get("items")
        inner = fitted(value, items if isinstance(items, dict) else {})
        return [inner] if inner is not None else None
    if kind in ("integer", "number"):
        if isinstance(value, int):
            return value
        return int(value) if value.isascii() and value.isdigit() and len(value) < 16 else None
    if kind != "string":
        return None
    text = str(value)
    return text if _string_fits(text, schema) else None


def _string_fits(text: str, schema: dict[str, Any]) -> bool:
    low, high = schema.get("minLength"), schema.get("maxLength")
    if (isinstance(low, int) and len(text) < low) or (isinstance(high, int) and len(text) > high):
        return False
    if schema.get("format") == "uuid" and not UUID_TEXT.fullmatch(text):
        return False
    pattern = schema.get("pattern")
    if isinstance(pattern, str):
        if len(pattern) > MAX_PATTERN or _NESTED_QUANTIFIER.search(pattern):
            return False
        try:
            return re.search(pattern, text) is not None
        except re.error:
            return False
    return True


def fill_from_pool(call: ProbeCall, tool: dict[str, Any] | None, pool: IdPool) -> ProbeCall:
    """The call with its id-like arguments taken from the pool where one fits; `reused` says which tool each came
    from. A tool that makes things keeps its generated `name`: a new thing gets a new name."""
    if call.kind != "generated" or tool is None or not pool.items:
        return call
    properties = input_schema(tool).get("properties")
    if not isinstance(properties, dict):
        return call
    name = tool_name(tool)
    making = bool(set(name_words(name)) & MAKING_VERBS)
    tool_entities = entity_words(name)
    arguments = dict(call.arguments)
    reused: dict[str, str] = {}
    for param in call.arguments:
        if (making and id_kind(param) == "name") or is_pid_name(set(name_words(param))):
            continue
        match = pool.best(param, properties.get(param), tool_entities)
        if match is not None:
            item, value = match
            arguments[param] = value
            reused[param] = item.tool
    return replace(call, arguments=arguments, reused=reused) if reused else call
