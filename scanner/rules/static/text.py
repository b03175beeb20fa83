"""Small text helpers shared by the static rules: words of a description and the normalised form patterns match.
(Splitting names into words and the verb vocabulary live in scanner/vocabulary.py.)"""

from __future__ import annotations

import re
import unicodedata

_WORD = re.compile(r"[^\W_]+(?:['’][^\W_]+)*", re.UNICODE)


def words(text: str) -> list[str]:
    """Words of a description (letters/digits runs), for counting and matching."""
    return _WORD.findall(text)


def normalise(text: str) -> str:
    """NFKC-normalise, drop invisible format characters, casefold: what a pattern should match against."""
    folded = unicodedata.normalize("NFKC", text)
    return "".join(ch for ch in folded if unicodedata.category(ch) != "Cf").casefold()
