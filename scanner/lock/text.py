"""How untrusted text from definitions is quoted inside change messages and stored in change records."""

from __future__ import annotations

import json
from typing import Any

from sandbox.core.untrusted import cap_text

MESSAGE_QUOTE_CHARS = 300
STORED_TEXT_CHARS = 4_000


def quoted(value: Any, limit: int = MESSAGE_QUOTE_CHARS) -> str:
    """A string in double quotes, with quotes and backslashes escaped, capped; other JSON as compact JSON."""
    if value is None:
        return "(none)"
    if not isinstance(value, str):
        value = json.dumps(value, sort_keys=True, separators=(",", ":"))
    return json.dumps(cap_text(value, limit), ensure_ascii=False)


def stored(value: Any) -> str | None:
    """The text kept in a change record's old/new fields."""
    if value is None:
        return None
    if not isinstance(value, str):
        value = json.dumps(value, sort_keys=True, separators=(",", ":"))
    return cap_text(value, STORED_TEXT_CHARS)
