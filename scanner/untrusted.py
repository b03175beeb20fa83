"""Untrusted text (tool names, descriptions, server output) is data: make it safe to show and bounded to store."""

from __future__ import annotations

import unicodedata
from typing import Any

# Defaults for storing server-provided text in reports.
MAX_STRING_CHARS = 16_384
MAX_STDERR_BYTES = 64 * 1024
TRUNCATION_MARK = "…[truncated {n} chars]"

_VISIBLE_NAMES = {"\n": "\\n", "\r": "\\r", "\t": "\\t", "\x1b": "\\e", "\x07": "\\a"}


def _is_unsafe_char(ch: str) -> bool:
    """Characters that can move the cursor, change the terminal, hide or reorder text."""
    if ch in ("\t",):
        return True
    category = unicodedata.category(ch)
    # Cc: C0/C1 controls (ESC, BEL, CR, NEL, CSI...); Cf: format chars (bidi overrides, zero-width, TAG chars);
    # Zl/Zp: line and paragraph separators; Co/Cn: private use and unassigned code points.
    return category in ("Cc", "Cf", "Zl", "Zp", "Co", "Cn")


def escape_for_terminal(text: str, limit: int = 2_000) -> str:
    """Return text with every control, format and invisible character shown as a visible escape, capped to limit."""
    text = cap_text(text, limit)
    out: list[str] = []
    for ch in text:
        if _is_unsafe_char(ch):
            out.append(_VISIBLE_NAMES.get(ch) or (f"\\x{ord(ch):02x}" if ord(ch) < 0x100 else f"\\u{ord(ch):04x}"
                                                  if ord(ch) < 0x10000 else f"\\U{ord(ch):08x}"))
        else:
            out.append(ch)
    return "".join(out)


def cap_text(text: str, limit: int = MAX_STRING_CHARS) -> str:
    """Cut text to at most limit characters, saying how much was cut."""
    if len(text) <= limit:
        return text
    return text[:limit] + TRUNCATION_MARK.format(n=len(text) - limit)


def cap_json(value: Any, *, max_string: int = MAX_STRING_CHARS, max_depth: int = 64, max_items: int = 10_000) -> Any:
    """Copy a JSON value with every string capped, depth bounded and containers bounded (iteratively safe depth)."""
    return _cap(value, max_string, max_depth, max_items, 0)


def _cap(value: Any, max_string: int, max_depth: int, max_items: int, depth: int) -> Any:
    if isinstance(value, str):
        return cap_text(value, max_string)
    if isinstance(value, (bool, int, float)) or value is None:
        return value
    if depth >= max_depth:
        return "…[nested deeper than {} levels]".format(max_depth)
    if isinstance(value, dict):
        items = list(value.items())[:max_items]
        return {cap_text(str(k), 256): _cap(v, max_string, max_depth, max_items, depth + 1) for k, v in items}
    if isinstance(value, (list, tuple)):
        return [_cap(v, max_string, max_depth, max_items, depth + 1) for v in list(value)[:max_items]]
    return cap_text(repr(value), max_string)


def decode_bytes(data: bytes, limit_bytes: int = MAX_STDERR_BYTES) -> tuple[str, bool]:
    """Decode untrusted bytes as UTF-8 (invalid sequences replaced), keeping the last limit_bytes; say if cut."""
    truncated = len(data) > limit_bytes
    if truncated:
        data = data[-limit_bytes:]
    return data.decode("utf-8", errors="replace"), truncated
