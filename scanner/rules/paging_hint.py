"""Whether a response says what is left (P3's test): a cursor, a next page, "has more", "showing 20 of 340", ...

The phrases, case-insensitive (the definition: `PAGING_HINT`):

    next cursor / next page / page token / has more (joined by `_`, `-`, a space or nothing), the words cursor,
    truncated, remaining and offset, "more results", "showing N of M" / "showing N out of M", the words "page N of M",
    "use offset" / "use limit" / "use page".

`says_what_is_left` answers what `PAGING_HINT.search` answers, on every text, about ten times faster: Python's
regex engine tries every branch of a case-insensitive alternation at every position of a 200,000-character
response (~35 ms each, a hostile server's output included). Here the text is case-folded once (`fold`: the
characters `re.IGNORECASE` matches to the phrases' ASCII letters become those letters, nothing else changes) and
searched with a case-sensitive form of the same phrases whose every branch begins with a literal letter (each `\\b`
moved behind it as a lookbehind), which the engine skips through with a set of first letters; a text with none of the
phrases' key words is not searched at all. tests/test_paging_hint.py checks the fold against every code point and
the two searches against each other.
"""

from __future__ import annotations

import re

PAGING_HINT = re.compile(
    r"next[_ -]?cursor|next[_ -]?page|page[_ -]?token|has[_ -]?more|\bcursor\b|\btruncated\b|\bremaining\b|"
    r"more results|showing \d+ (?:of|out of) \d+|\bpage \d+ of \d+|\boffset\b|use (?:offset|limit|page)",
    re.IGNORECASE)
# PAGING_HINT over folded text, no flag: `\bcursor\b` is `c(?<!\wc)ursor\b` (the `c` at a word's start).
_FOLDED_HINT = re.compile(
    r"next[_ -]?cursor|next[_ -]?page|page[_ -]?token|has[_ -]?more|c(?<!\wc)ursor\b|t(?<!\wt)runcated\b|"
    r"r(?<!\wr)emaining\b|more results|showing \d+ (?:of|out of) \d+|p(?<!\wp)age \d+ of \d+|o(?<!\wo)ffset\b|"
    r"use (?:offset|limit|page)")
# Every branch holds one of these (folded): a text without any has no hint.
_KEY_WORDS = ("next", "page", "more", "cursor", "truncated", "remaining", "showing", "offset", "use ")


def fold(text: str) -> str:
    """`text` lower-cased, one character for one, with the three characters re.IGNORECASE also matches to an ASCII
    letter that `str.lower` leaves alone or makes two of: İ (U+0130) and ı (U+0131) become i, ſ (U+017F) s."""
    return text.replace("\u0130", "i").lower().replace("\u0131", "i").replace("\u017f", "s")


def says_what_is_left(text: str) -> bool:
    """`PAGING_HINT.search(text)` is not None, computed in linear time with a small constant."""
    folded = fold(text)
    return any(word in folded for word in _KEY_WORDS) and _FOLDED_HINT.search(folded) is not None
