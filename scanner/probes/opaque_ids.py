"""Opaque identifiers in a response (UUIDs, long hex, random-looking tokens) and whether a readable label goes with
them.

An ID is labelled when, in JSON, its object also holds a readable name-like field; in plain text, when its line holds
a readable word besides the IDs and id-ish keys.

Binary content is not IDs: the `blob` of a resource and the `data` of an image or audio block (an object with a
`mimeType` beside them), a `data:...;base64,` URI and any base64 run of 256 characters or more are the content
asked for, carried as text. They are left out before IDs are looked for (P1 still counts their size).

Nothing here grows with the square of what a server sends (the rules read responses of up to 200,000 characters):
the patterns are tried only where a word or a run of their characters starts, a line is looked at only when it holds
a run of 16 ID characters (the shortest ID), a found ID is checked against those before it by bisection, and a line
of many IDs is blanked run by run (`_blank_ids`). tests/test_probe_text_reference.py compares this with the earlier
code on varied, large and hostile inputs."""

from __future__ import annotations

import json
import re
from bisect import bisect_left, insort
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
# A run is tried where it starts (the lookbehind): a run of 255 is not tried again at each of its characters.
BASE64_RUN = re.compile(
    r"data:[\w.+-]+/[\w.+-]+;base64,[A-Za-z0-9+/]*={0,2}|(?<![A-Za-z0-9+/])[A-Za-z0-9+/]{256,}={0,2}")
# Every ID (UUID, hex, token) lies in a run of 16 or more of these characters.
_ID_RUN = re.compile(r"(?<![A-Za-z0-9_-])[A-Za-z0-9_-]{16,}")
_SHORTEST_ID = 16
_SMALL_BLANKING = 2_000_000  # IDs x line length under which blanking each ID over the whole line is cheaper
# An ASCII character's class for looks_random: digit 0, upper A, lower a, anything else a space.
_CLASS_OF = {code: "0" if chr(code).isdigit() else "A" if chr(code).isupper() else "a" if chr(code).islower() else " "
             for code in range(128)}
_TRANSITIONS = ("0A", "0a", "A0", "Aa", "a0", "aA")
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
    if _ID_RUN.search(text) is None:
        return []
    spans: list[tuple[int, int]] = []  # disjoint, in order: each found ID is checked against its neighbours only
    for pattern in (UUID, LONG_HEX, TOKEN):
        for match in pattern.finditer(text):
            start, end = match.span()
            at = bisect_left(spans, (end,))  # spans[at:] start at or after this match's end
            overlaps = at > 0 and spans[at - 1][1] > start
            if not overlaps and (pattern is not TOKEN or looks_random(match.group())):
                insort(spans, (start, end))
    return [text[start:end] for start, end in spans]


def looks_random(token: str) -> bool:
    """A 20+ character token with letters and digits that switches character class often (not a snake_case word)."""
    if token.isascii():
        return _looks_random_ascii(token)
    if not (any(ch.isdigit() for ch in token) and any(ch.isalpha() for ch in token)):
        return False
    pairs = [(_char_class(left), _char_class(right)) for left, right in pairwise(token)
             if left.isalnum() and right.isalnum()]  # separators (_ -) split words; they are not randomness
    transitions = sum(1 for left, right in pairs if left != right)
    return bool(pairs) and transitions / len(pairs) >= MIN_TRANSITION_RATE


def _looks_random_ascii(token: str) -> bool:
    """looks_random for an ASCII token (every token TOKEN finds), with string operations instead of a loop."""
    classes = token.translate(_CLASS_OF)
    if "0" not in classes or ("A" not in classes and "a" not in classes):
        return False
    words = classes.split()  # runs of letters and digits
    pairs = sum(len(word) for word in words) - len(words)
    transitions = sum(classes.count(pair) for pair in _TRANSITIONS)
    return bool(pairs) and transitions / pairs >= MIN_TRANSITION_RATE


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
        id_chars = _id_chars(value)
        return id_chars if id_chars * 2 >= len(value.strip()) > 0 else _unlabelled_in_lines(value)  # mostly IDs
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
    """The IDs of each line that holds no readable word once its IDs and id-ish keys are blanked."""
    if _ID_RUN.search(text) is None:  # no line has an ID
        return 0
    total = 0
    for line in text.splitlines():
        ids = opaque_ids(line) if _ID_RUN.search(line) is not None else []
        if not ids:
            continue
        rest = _ID_KEY_WORDS.sub(" ", _blank_ids(line, ids))
        if not _READABLE_WORD.search(rest):
            total += sum(len(found) for found in ids)
    return total


def _blank_ids(line: str, ids: list[str]) -> str:
    """`line` with every occurrence of each of `ids` (16 or more ID characters each), in turn, replaced by a space,
    as `str.replace` in a loop gives, without replacing each over the whole line when there are many: an ID occurs
    only inside a run of ID characters and a space splits runs, so each run of 16 or more is blanked alone, with only
    the IDs it holds (found by their first 16 characters)."""
    order = {found: index for index, found in enumerate(dict.fromkeys(ids))}  # a second replace of one ID is a no-op
    if len(order) * len(line) <= _SMALL_BLANKING:
        for found in order:
            line = line.replace(found, " ")
        return line
    by_prefix: dict[str, list[str]] = {}
    for found in order:
        by_prefix.setdefault(found[:_SHORTEST_ID], []).append(found)
    lengths = sorted(map(len, order))

    def blank_run(match: re.Match[str]) -> str:
        run = match.group()
        held = {run} if run in order else set()
        if bisect_left(lengths, len(run)) > 0:  # an ID shorter than the run may be inside it
            held.update(found for at in range(len(run) - _SHORTEST_ID + 1)
                        for found in by_prefix.get(run[at:at + _SHORTEST_ID], ()) if run.startswith(found, at))
        for found in sorted(held, key=order.__getitem__):
            run = run.replace(found, " ")
        return run

    return _ID_RUN.sub(blank_run, line)
