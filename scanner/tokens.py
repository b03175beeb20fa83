"""The one tokens estimate: 4 characters ≈ 1 token, rounded up. The score, S6, the probes' response sizes and P1-P5's
measured waste all count with it."""

from __future__ import annotations

import json
from typing import Any

CHARS_PER_TOKEN = 4
TOKEN_ESTIMATE = "4 characters of compact JSON ≈ 1 token"
MAX_REPR_CHARS = 10_000_000  # what a value that is not JSON is counted by, at most


def tokens_for_chars(chars: int) -> int:
    """Estimated tokens of this many characters (rounded up; 0 for none)."""
    return (chars + CHARS_PER_TOKEN - 1) // CHARS_PER_TOKEN


def text_tokens(text: str) -> int:
    """Estimated tokens of a text an agent reads."""
    return tokens_for_chars(len(text))


def json_tokens(value: Any) -> int:
    """Estimated tokens of a JSON value as compact JSON (a value that is not JSON is counted by its repr)."""
    try:
        chars = len(json.dumps(value, separators=(",", ":"), ensure_ascii=False))
    except (RecursionError, ValueError, TypeError):
        chars = len(repr(value)[:MAX_REPR_CHARS])
    return tokens_for_chars(chars)
