"""The probe rules' text tests as they were before they were made linear-time (47a581e), kept verbatim as the
reference the faster code is compared with (tests/test_probe_text_reference.py): P3's paging-hint regex and P2's
opaque-ID measurement (scanner/probes/opaque_ids.py then). Not used by the scanner."""
# ruff: noqa
from __future__ import annotations

import json
import re
from itertools import pairwise
from typing import Any

UUID = re.compile(r"\b[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}\b")
LONG_HEX = re.compile(r"\b[0-9a-fA-F]{16,}\b")
TOKEN = re.compile(r"(?<![A-Za-z0-9_-])[A-Za-z0-9_-]{20,}(?![A-Za-z0-9_-])")
MAX_JSON_DEPTH = 64
MIN_TRANSITION_RATE = 0.25  # random strings switch between letter, digit and case classes often
LABEL_KEYS = frozenset({
    "name", "title", "label", "display_name", "displayname", "description", "summary", "subject", "path", "filename",
    "file", "email", "username", "login", "full_name", "fullname", "text", "message", "headline", "caption",
})
_ID_KEY_WORDS = re.compile(r"\b[A-Za-z_]*(?:id|ids|uuid|key|sha|hash|token|ref)\b", re.IGNORECASE)
_READABLE_WORD = re.compile(r"[A-Za-z]{3,}")
BASE64_RUN = re.compile(r"data:[\w.+-]+/[\w.+-]+;base64,[A-Za-z0-9+/]*={0,2}|[A-Za-z0-9+/]{256,}={0,2}")
BINARY_KEYS = frozenset({"blob", "data"})
MIME_KEYS = frozenset({"mimeType", "mime_type", "mimetype"})


def without_binary(text: str) -> str:
    """The text with base64 payloads (data URIs, runs of 256+ base64 characters) blanked."""
    return BASE64_RUN.sub(" ", text)


def _is_binary_payload(container: dict[Any, Any], key: Any) -> bool:
    """A resource's `blob`, an image's or audio's `data`: the payload of an object that names its MIME type."""
    return key in BINARY_KEYS and any(mime in container for mime in MIME_KEYS)


def opaque_ids(text: str) -> list[str]:
    """Every opaque ID in text, in order (a UUID is not counted again as hex or token); base64 payloads are not."""
    text = without_binary(text)
    spans: list[tuple[int, int]] = []
    for pattern in (UUID, LONG_HEX, TOKEN):
        for match in pattern.finditer(text):
            overlaps = any(start < match.end() and match.start() < end for start, end in spans)
            if not overlaps and (pattern is not TOKEN or looks_random(match.group())):
                spans.append(match.span())
    return [text[start:end] for start, end in sorted(spans)]


def looks_random(token: str) -> bool:
    """A 20+ character token with letters and digits that switches character class often (not a snake_case word)."""
    if not (any(ch.isdigit() for ch in token) and any(ch.isalpha() for ch in token)):
        return False
    pairs = [(_char_class(left), _char_class(right)) for left, right in pairwise(token)
             if left.isalnum() and right.isalnum()]  # separators (_ -) split words; they are not randomness
    transitions = sum(1 for left, right in pairs if left != right)
    return bool(pairs) and transitions / len(pairs) >= MIN_TRANSITION_RATE


def _char_class(ch: str) -> str:
    if ch.isdigit():
        return "digit"
    if ch.isupper():
        return "upper"
    return "lower"


def unlabelled_id_chars(text: str) -> int:
    """How many characters of text are opaque IDs with no readable label beside them."""
    try:
        value = json.loads(text)
    except (ValueError, RecursionError):  # not JSON, or nested deeper than the parser goes
        return _unlabelled_in_lines(text)
    if isinstance(value, (dict, list)):
        return _unlabelled_in_json(value, labelled=False, depth=0)
    return _unlabelled_in_lines(text)


def _unlabelled_in_json(value: Any, *, labelled: bool, depth: int) -> int:
    if depth > MAX_JSON_DEPTH:
        return 0
    if isinstance(value, dict):
        has_label = labelled or _has_label(value)
        return sum(_unlabelled_in_json(item, labelled=has_label, depth=depth + 1)
                   + _unlabelled_key_chars(key, item, has_label) for key, item in value.items()
                   if not _is_binary_payload(value, key))
    if isinstance(value, list):
        return sum(_unlabelled_in_json(item, labelled=False, depth=depth + 1) for item in value)
    if isinstance(value, str) and not labelled:
        return _id_chars(value) if _is_mostly_ids(value) else _unlabelled_in_lines(value)
    return 0


def _has_label(value: dict[Any, Any]) -> bool:
    return any(_is_label(str(key), item) for key, item in value.items())


def _unlabelled_key_chars(key: str, item: Any, labelled: bool) -> int:
    """An ID used as a key is labelled by its own object (e.g. {"<uuid>": {"name": "Ana"}})."""
    if labelled or (isinstance(item, dict) and _has_label(item)):
        return 0
    return _id_chars(key)


def _is_label(key: str, value: Any) -> bool:
    return (key.lower() in LABEL_KEYS and isinstance(value, str) and bool(_READABLE_WORD.search(value))
            and not _is_mostly_ids(value))


def _is_mostly_ids(value: str) -> bool:
    return _id_chars(value) * 2 >= len(value.strip()) > 0


def _id_chars(text: str) -> int:
    return sum(len(found) for found in opaque_ids(text))


def _unlabelled_in_lines(text: str) -> int:
    total = 0
    for line in text.splitlines():
        ids = opaque_ids(line)
        if not ids:
            continue
        rest = line
        for found in ids:
            rest = rest.replace(found, " ")
        rest = _ID_KEY_WORDS.sub(" ", rest)
        if not _READABLE_WORD.search(rest):
            total += sum(len(found) for found in ids)
    return total


PAGING_HINT = re.compile(
    r"next[_ -]?cursor|next[_ -]?page|page[_ -]?token|has[_ -]?more|\bcursor\b|\btruncated\b|\bremaining\b|"
    r"more results|showing \d+ (?:of|out of) \d+|\bpage \d+ of \d+|\boffset\b|use (?:offset|limit|page)",
    re.IGNORECASE)
