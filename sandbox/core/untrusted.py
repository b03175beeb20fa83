"""Untrusted text (tool names, descriptions, server output, names read from files an install wrote, log lines a
sandboxed process caused) is data: made safe to show and bounded to store. The one home of every escape for it.

Three views, each kept as it was where it came from (stored reports and the job summary read the same as before):
- `escape_for_terminal`: Unicode kept, every control (C0 and C1), format, separator, private-use, unassigned and lone
  surrogate character as a visible escape (`\\n`, `\\e`, `\\x85`, `\\u202e`, `\\ud800`); for the terminal, reports
  and error lines.
- `escape_invisible`: the same idea with numeric escapes only, surrogates included; for the GitHub job summary.
- `escape_to_ascii`: printable ASCII only (a name or version read from a file the install wrote); `escape_host` is
  its form for host names from the proxy's logs (no space either, every other character as `\\x` and its code).
- `escape_json_text`: serialised JSON with every such character inside its strings as a `\\uXXXX` escape (the same
  value, read back), so a JSON, SARIF or lock file never carries a raw C1 control, bidi override or lone surrogate.
"""

from __future__ import annotations

import re
import unicodedata
from typing import Any

# Defaults for storing server-provided text in reports.
MAX_STRING_CHARS = 16_384
MAX_STDERR_BYTES = 64 * 1024
TRUNCATION_MARK = "…[truncated {n} chars]"
MAX_JSON_DEPTH = 64
MAX_JSON_ITEMS = 10_000
DEPTH_MARK = "…[nested deeper than {} levels]"
_CUT_TEXT = re.compile(re.escape(TRUNCATION_MARK).replace(re.escape("{n}"), r"\d+") + r"\Z")

_VISIBLE_NAMES = {"\n": "\\n", "\r": "\\r", "\t": "\\t", "\x1b": "\\e", "\x07": "\\a"}
# Cc: C0/C1 controls (ESC, BEL, CR, NEL, CSI...); Cf: format chars (bidi overrides, zero-width, TAG chars);
# Zl/Zp: line and paragraph separators; Co/Cn: private use and unassigned code points; Cs: lone surrogates (a JSON
# `"\\ud800"` decodes to one, and no UTF-8 stream can carry it raw).
_TERMINAL_UNSAFE = frozenset({"Cc", "Cf", "Zl", "Zp", "Co", "Cn", "Cs"})
_SUMMARY_UNSAFE = _TERMINAL_UNSAFE
# Characters drawn as nothing that are no control or format character: the Hangul fillers, the Khmer inherent
# vowels, the Mongolian free variation selectors and vowel separator, the combining grapheme joiner, the braille
# blank. A name or description can hide text behind them as well as behind a zero-width space.
INVISIBLE_CHARACTERS = frozenset("\u034f\u115f\u1160\u17b4\u17b5\u180b\u180c\u180d\u180e\u180f\u3164\uffa0\u2800")
# What JSON text must not carry raw: DEL and C1 controls, format characters (bidi, zero-width, TAG), separators,
# lone surrogates.
# (C0 controls are always escaped by the serialiser; printable Unicode stays readable.)
_JSON_UNSAFE = re.compile("[\u007f-\u009f\u00ad\u061c\u180e\u200b-\u200f\u2028-\u202e\u2060-\u206f\ufeff"
                          "\ufff9-\ufffb\ud800-\udfff\U000e0000-\U000e007f]")


def visible_escape(ch: str) -> str:
    """One character as a Python-style escape: `\\xNN`, `\\uNNNN` or `\\UNNNNNNNN`."""
    code = ord(ch)
    return f"\\x{code:02x}" if code < 0x100 else f"\\u{code:04x}" if code < 0x10000 else f"\\U{code:08x}"


def _is_unsafe_char(ch: str) -> bool:
    """Characters that can move the cursor, change the terminal, hide or reorder text."""
    return ch == "\t" or ch in INVISIBLE_CHARACTERS or unicodedata.category(ch) in _TERMINAL_UNSAFE


def escape_for_terminal(text: str, limit: int = 2_000) -> str:
    """Return text with every control, format and invisible character shown as a visible escape, capped to limit."""
    return "".join(_VISIBLE_NAMES.get(ch) or visible_escape(ch) if _is_unsafe_char(ch) else ch
                   for ch in cap_text(text, limit))


def escape_invisible(text: str) -> str:
    """Every control, format, surrogate, private-use, unassigned and separator character as a numeric escape (no
    named ones: a newline is `\\x0a`); everything else as it is. Not capped."""
    return "".join(visible_escape(ch) if unicodedata.category(ch) in _SUMMARY_UNSAFE else ch for ch in text)


def escape_to_ascii(text: str) -> str:
    """Printable ASCII (space included) kept, every other character as a visible escape. Not capped."""
    return "".join(ch if 0x20 <= ord(ch) < 0x7F else visible_escape(ch) for ch in text)


def escape_host(text: str) -> str:
    """A host name as a log line gave it: printable ASCII but space kept, every other character as `\\x` and its
    code in hex (two digits at least). Not capped."""
    return "".join(ch if 0x21 <= ord(ch) < 0x7F else f"\\x{ord(ch):02x}" for ch in text)


def _json_escape(match: re.Match[str]) -> str:
    code = ord(match.group())
    if code < 0x10000:
        return f"\\u{code:04x}"
    code -= 0x10000
    return f"\\u{0xD800 + (code >> 10):04x}\\u{0xDC00 + (code & 0x3FF):04x}"


def escape_json_text(text: str) -> str:
    """Serialised JSON (any `json.dumps` or `model_dump_json` output) with every C1 control, format character,
    separator and lone surrogate as a `\\uXXXX` escape. Outside strings JSON is ASCII, so the escapes fall inside
    strings and the document reads back to the same value; the text can then always be encoded as UTF-8."""
    return _JSON_UNSAFE.sub(_json_escape, text)


def cap_text(text: str, limit: int = MAX_STRING_CHARS) -> str:
    """Cut text to at most limit characters, saying how much was cut."""
    if len(text) <= limit:
        return text
    return text[:limit] + TRUNCATION_MARK.format(n=len(text) - limit)


def cap_json(value: Any, *, max_string: int = MAX_STRING_CHARS, max_depth: int = MAX_JSON_DEPTH,
             max_items: int = MAX_JSON_ITEMS) -> Any:
    """Copy a JSON value with every string capped, depth bounded and containers bounded (iteratively safe depth)."""
    return _cap(value, max_string, max_depth, max_items, 0)


def _cap(value: Any, max_string: int, max_depth: int, max_items: int, depth: int) -> Any:
    if isinstance(value, str):
        return cap_text(value, max_string)
    if isinstance(value, (bool, int, float)) or value is None:
        return value
    if depth >= max_depth:
        return DEPTH_MARK.format(max_depth)
    if isinstance(value, dict):
        items = value.items() if len(value) <= max_items else list(value.items())[:max_items]
        capped: dict[str, Any] = {}
        for key, child in items:
            # A plain short string or a plain scalar is kept here, as the call for it would keep it; only
            # containers (and anything else) go one call deeper. A plain `str` key is its own str().
            name = key if type(key) is str and len(key) <= 256 else cap_text(str(key), 256)
            kind = type(child)
            if kind is str and len(child) <= max_string or kind in _PLAIN_SCALARS:
                capped[name] = child
            else:
                capped[name] = _cap(child, max_string, max_depth, max_items, depth + 1)
        return capped
    if isinstance(value, (list, tuple)):
        return [child if type(child) in _PLAIN_SCALARS or type(child) is str and len(child) <= max_string
                else _cap(child, max_string, max_depth, max_items, depth + 1) for child in list(value)[:max_items]]
    return cap_text(repr(value), max_string)


_PLAIN_SCALARS = frozenset({bool, int, float, type(None)})


def cut_by_cap(value: Any) -> bool:
    """Whether cap_json (with its defaults) may have cut something out of this copy: a string ending in the
    truncation mark, the depth mark, or a container exactly as long as the item cap (that cut leaves no mark). A
    stored copy that was cut no longer says what was served, so it cannot stand for it (a lock pins it).
    Iterative, so any depth is safe."""
    depth_mark = DEPTH_MARK.format(MAX_JSON_DEPTH)
    stack = [value]
    while stack:
        item = stack.pop()
        if isinstance(item, str):
            if item == depth_mark or _CUT_TEXT.search(item):
                return True
        elif isinstance(item, (dict, list)):
            if len(item) == MAX_JSON_ITEMS:
                return True
            stack.extend([*item.keys(), *item.values()] if isinstance(item, dict) else item)  # keys are cut too
    return False


def decode_bytes(data: bytes, limit_bytes: int = MAX_STDERR_BYTES) -> tuple[str, bool]:
    """Decode untrusted bytes as UTF-8 (invalid sequences replaced), keeping the last limit_bytes; say if cut."""
    truncated = len(data) > limit_bytes
    if truncated:
        data = data[-limit_bytes:]
    return data.decode("utf-8", errors="replace"), truncated
