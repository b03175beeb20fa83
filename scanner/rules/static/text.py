"""Small text helpers shared by the static rules: words of a description and the normalised form patterns match.
(Splitting names into words and the verb vocabulary live in scanner/vocabulary.py.)"""

from __future__ import annotations

import re
import unicodedata

from sandbox.core.untrusted import INVISIBLE_CHARACTERS

_WORD = re.compile(r"[^\W_]+(?:['’][^\W_]+)*", re.UNICODE)

# Letters of other scripts drawn like Latin ones (Unicode's confusables, the ones that pass for a lower-case Latin
# letter once case-folded): `іgnоrе` written with Cyrillic і, о, е reads as "ignore" to the model and to the user.
# NFKC leaves them as they are; they are folded to the Latin letter before the phrases are matched.
CONFUSABLES = str.maketrans({
    # Cyrillic
    "а": "a", "в": "b", "е": "e", "һ": "h", "н": "h", "і": "i", "ј": "j", "к": "k", "ӏ": "l", "м": "m", "о": "o",
    "р": "p", "с": "c", "ԛ": "q", "ѕ": "s", "т": "t", "у": "y", "х": "x", "ԁ": "d", "ԝ": "w", "ɡ": "g", "ѵ": "v", "ү": "y",
    "ց": "g", "օ": "o", "ս": "u", "ո": "n", "հ": "h",  # Armenian
    # Greek
    "α": "a", "β": "b", "ε": "e", "η": "n", "ι": "i", "κ": "k", "μ": "u", "ν": "v", "ο": "o", "ρ": "p", "τ": "t",
    "υ": "u", "χ": "x", "ζ": "z", "ϲ": "c", "ϳ": "j",
    # Latin letters that are not a, i, ... but look like them
    "ı": "i", "ɑ": "a", "ʏ": "y", "ɩ": "i", "ƅ": "b",
})
# Characters drawn as nothing that are neither format (Cf) nor dropped with the marks: the terminal's list of them
_INVISIBLE = INVISIBLE_CHARACTERS
_DROPPED = frozenset({"Cf", "Mn", "Me"})
_NON_ASCII = re.compile(r"[^\x00-\x7f]")


def words(text: str) -> list[str]:
    """Words of a description (letters/digits runs), for counting and matching."""
    return _WORD.findall(text)


def normalise(text: str) -> str:
    """What a pattern should match against: compatibility forms folded (NFKC: full-width, ligatures, maths letters),
    combining marks, format and invisible characters dropped (`i\u0301gno\u0308re`, `ig\u200bnore`), case-folded, and
    look-alike letters of other scripts read as the Latin letter they pass for (CONFUSABLES)."""
    decomposed = unicodedata.normalize("NFKD", text)
    if len(decomposed) - len(decomposed.encode("ascii", "ignore")) < len(decomposed) // 8:
        kept = _NON_ASCII.sub(_kept, decomposed)  # mostly ASCII (no ASCII character is dropped): a regex scan
    else:
        kept = "".join(ch for ch in decomposed if _is_kept(ch))
    return unicodedata.normalize("NFKC", kept.casefold().translate(CONFUSABLES))


def _is_kept(ch: str) -> bool:
    """Not a mark, a format or an invisible character: what normalise keeps of the text."""
    return unicodedata.category(ch) not in _DROPPED and ch not in _INVISIBLE


def _kept(match: re.Match[str]) -> str:
    ch = match.group()
    return ch if _is_kept(ch) else ""
