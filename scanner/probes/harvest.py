"""Identifiers the server returned: what a successful call's result holds under id-like keys (`id`, `note_id`,
`noteId`, `uuid`, `key`, `slug`, `name`, `uri`, …), for later calls to reuse (id_reuse).

Read from `structuredContent` and from text blocks that are JSON, plus `key: value` lines of plain text (its first
MAX_PROSE_CHARS: the search costs ~30 ms a megabyte, in the probes' event loop, and the seeded 1.2 MB log that read
tools return in full cost server-filesystem's scan 75 ms; an identifier a server made is said near the top of what
it answers) and the uri of resource links. Everything here is untrusted and bounded: a few levels deep, a few
thousand nodes, a few dozen values per result, short single-line strings and safe integers only. A value that names
a host (a URL, an e-mail address, a dotted name) or a network URL is never harvested: the scanner must not carry a
destination the server chose into its own arguments (egress grading trusts the hosts in the arguments as the
scanner's)."""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from itertools import islice
from typing import Any
from urllib.parse import urlsplit

from scanner.probes.call_order import NAME_PARAMS, URI_PARAMS, entity_words
from scanner.probes.arguments import ID_WORDS
from scanner.rules.egress import argument_hosts
from scanner.vocabulary import name_words

MAX_DEPTH = 6
MAX_NODES = 2_000
MAX_VALUES = 40  # per result
MAX_VALUE_CHARS = 200
MAX_JSON_TEXT = 1_000_000  # a text block longer than this is not parsed as JSON
MAX_PROSE_CHARS = 65_536  # what of a text block that is not JSON is searched for `key: value` pairs
MAX_SAFE_INTEGER = 2 ** 53
NETWORK_SCHEMES = frozenset({"http", "https", "ws", "wss", "ftp", "ftps", "sftp", "ssh", "git", "smtp", "mailto",
                             "tcp", "udp", "dns", "ldap", "redis", "postgres", "postgresql", "mysql", "mongodb"})
_TEXT_PAIR = re.compile(r"(?<![A-Za-z0-9_])([A-Za-z][A-Za-z0-9_]{0,40})\s*[:=]\s*[\"'`]?([A-Za-z0-9][A-Za-z0-9_\-:]{0,127})")
_CONTROL = re.compile(r"[\x00-\x1f\x7f-\x9f\u200b-\u200f\u202a-\u202e\u2066-\u2069]")


@dataclass(frozen=True)
class Harvested:
    """One identifier a tool returned."""

    key: str  # the key it was under, as sent (capped)
    kind: str  # "id" | "name" | "uri": what sort of identifier the key says it is
    value: str | int
    entities: frozenset[str]  # what it identifies: from the key (`note_id`), else its parent key, else the tool
    tool: str  # the tool whose result held it


def id_kind(key: str) -> str | None:
    """What sort of identifier a key (or a parameter) names: id, name or uri; None for any other key."""
    lowered = key.lower()
    if lowered in NAME_PARAMS:
        return "name"
    if lowered in URI_PARAMS:
        return "uri"
    return "id" if set(name_words(key)) & ID_WORDS else None


def harvest(call_result: dict[str, Any], tool: str) -> list[Harvested]:
    """The identifiers in a tools/call result (wire format), in the order found, at most MAX_VALUES."""
    found: list[Harvested] = []
    walker = _Walker(tool=tool, tool_entities=entity_words(tool), found=found)
    structured = call_result.get("structuredContent")
    if isinstance(structured, (dict, list)):
        walker.walk(structured, parent="", depth=0)
    content = call_result.get("content")
    for block in content if isinstance(content, list) else []:
        if isinstance(block, dict) and block.get("type") == "text" and isinstance(block.get("text"), str):
            walker.text(block["text"])
        elif isinstance(block, dict) and block.get("type") == "resource_link":
            walker.keep("uri", block.get("uri"), parent="")
    return _unique(found)[:MAX_VALUES]


@dataclass
class _Walker:
    tool: str
    tool_entities: frozenset[str]
    found: list[Harvested]
    nodes: int = 0

    def full(self) -> bool:
        return len(self.found) >= MAX_VALUES or self.nodes >= MAX_NODES

    def text(self, text: str) -> None:
        stripped = text.strip()
        if stripped.startswith(("{", "[")) and len(stripped) <= MAX_JSON_TEXT:
            try:
                self.walk(json.loads(stripped), parent="", depth=0)
                return
            except (ValueError, RecursionError):  # not JSON after all: read it as text
                pass
        for match in _TEXT_PAIR.finditer(text, 0, _prose_end(text)):
            if self.full():
                return
            self.nodes += 1
            if id_kind(match.group(1)) == "id":  # in prose, only id keys: "name: the thing" is too loose
                self.keep(match.group(1), match.group(2), parent="")

    def walk(self, value: Any, *, parent: str, depth: int) -> None:
        if depth > MAX_DEPTH or self.full():
            return
        self.nodes += 1
        if isinstance(value, dict):
            for key, item in islice(value.items(), MAX_NODES):
                if isinstance(item, (dict, list)):
                    self.walk(item, parent=str(key), depth=depth + 1)
                elif isinstance(key, str):
                    self.keep(key, item, parent=parent)
                if self.full():
                    return
        elif isinstance(value, list):
            for item in islice(value, MAX_NODES):
                self.walk(item, parent=parent, depth=depth + 1)
                if self.full():
                    return

    def keep(self, key: str, value: Any, *, parent: str) -> None:
        kind = id_kind(key)
        clean = acceptable(value, kind)
        if kind is None or clean is None:
            return
        entities = entity_words(key) or entity_words(parent) or self.tool_entities
        self.found.append(Harvested(key=key[:64], kind=kind, value=clean, entities=entities, tool=self.tool))


def _prose_end(text: str) -> int:
    """Where the `key: value` search of `text` stops: its end, or the end of its last whole line within
    MAX_PROSE_CHARS (a value cut at the bound would be harvested as a shorter, wrong identifier)."""
    if len(text) <= MAX_PROSE_CHARS:
        return len(text)
    newline = text.rfind("\n", 0, MAX_PROSE_CHARS)
    return newline if newline > 0 else MAX_PROSE_CHARS


def acceptable(value: Any, kind: str | None) -> str | int | None:
    """The value, when it may be sent back: a short single-line string naming no host, or a safe integer."""
    if isinstance(value, bool) or kind is None:
        return None
    if isinstance(value, int):
        return value if abs(value) < MAX_SAFE_INTEGER and kind == "id" else None
    if not isinstance(value, str) or not value.strip() or len(value) > MAX_VALUE_CHARS or _CONTROL.search(value):
        return None
    if argument_hosts({"value": value}):
        return None
    scheme = urlsplit(value).scheme.lower() if ":" in value else ""
    if scheme in NETWORK_SCHEMES:
        return None
    return value


def _unique(found: list[Harvested]) -> list[Harvested]:
    seen: set[tuple[str, str, str]] = set()
    kept: list[Harvested] = []
    for item in found:
        mark = (item.kind, type(item.value).__name__, str(item.value))
        if mark not in seen:
            seen.add(mark)
            kept.append(item)
    return kept
