"""A value a string property's own description offers: its first quoted example (`IANA timezone name (e.g.,
'America/New_York')`) or a format it spells out (`HH:MM`, `YYYY-MM-DD`). The generated probe is then a call the tool
accepts, so it reaches the code behind the argument checks: a tool that misbehaves only on valid input is watched
misbehaving, where a placeholder word got an error answer and nothing else.

The description is the server's text. An example is used only when it is short plain text: letters, digits, spaces
and `_ + - / : ,`, never a URL, a host or address (no `.` or `@`), a path from the root or with `..`. Names that take
paths, URLs, hosts, e-mail addresses or process ids keep the values that point into the sandbox, under `.invalid` or
at no process (scanner.probes.value_generation decides those first).
"""

from __future__ import annotations

import re
from typing import Any

MAX_DESCRIPTION_CHARS = 2_000  # of a description searched (the server's text: the search stays cheap)
# Each run of spaces is read by one possessive `\s*+`: three `\s*` side by side split a run of n spaces ~n**3 ways
# before failing (a description of "e.g." and 2,000 spaces took 15 s of the scan's one thread per property).
_EXAMPLE = re.compile(r"""(?:\be\.\s?g\.?|\bfor\s+example|\bfor\s+instance|\bsuch\s+as|\bexamples?)\s*+(?:[:,]\s*+)?
                          (?:\(\s*+)?(?P<quote>['"`])(?P<value>[^'"`\n]{1,64})(?P=quote)""", re.IGNORECASE | re.VERBOSE)
_PLAIN = re.compile(r"[A-Za-z0-9][A-Za-z0-9 _+\-/:,]{0,63}")
# Formats a description spells out, longest first (HH:MM:SS before HH:MM).
_FORMATS = (("YYYY-MM-DDTHH:MM:SS", "2024-01-15T09:30:00"), ("YYYY-MM-DD", "2024-01-15"), ("HH:MM:SS", "09:30:00"),
            ("HH:MM", "09:30"))


def described_value(schema: dict[str, Any]) -> str | None:
    """The first plain example the property's description quotes, else the value of a format it names; None when it
    offers neither (or only what is not plain text)."""
    description = schema.get("description")
    if not isinstance(description, str):
        return None
    text = description[:MAX_DESCRIPTION_CHARS]
    for found in _EXAMPLE.finditer(text):
        value = found.group("value").strip()
        if _is_plain(value):
            return value
    upper = text.upper()
    return next((value for spelled, value in _FORMATS if spelled in upper), None)


def _is_plain(value: str) -> bool:
    return bool(_PLAIN.fullmatch(value)) and "://" not in value and ".." not in value and not value.startswith("/")
