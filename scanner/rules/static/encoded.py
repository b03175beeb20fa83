"""Text hidden in an encoding a model reads but a linter does not: base64, hex, URL (%XX) escapes, HTML entities,
JSON/Python `\\uXXXX`/`\\xXX` escapes, and ROT13 where the text names it. `decoded(text)` gives (encoding, text) for
each encoding that hides readable text, for S8 to search its phrases in.

Each encoding is looked for only where its marker occurs, and only where it could hide a letter or a tag: `%41`
(not the `%20` or `%2F` of an ordinary URL), `&#105;` or `&lt;` (not `&amp;`), a backslash escape, a run of 24 or
more base64 or hex digits. A run that decodes to bytes that are not mostly printable text with a space in it (an
image, a hash, a key, a long identifier) is not kept.
"""

from __future__ import annotations

import base64
import binascii
import codecs
import html
import re
import urllib.parse
from collections.abc import Iterable

MIN_RUN = 24  # characters of the shortest base64 or hex run decoded (18 or 12 bytes: shorter says little)
_RUN = re.compile(r"[A-Za-z0-9+/_-]{24,}={0,2}")  # base64 (standard or URL-safe) or hex
_HEX = re.compile(r"[0-9A-Fa-f]+")
_HEX_SPACED = re.compile(r"(?:[0-9A-Fa-f]{2}[ :,]){11,}[0-9A-Fa-f]{2}")
_HEX_PAIR = re.compile(r"[0-9a-f]{2}")
_HEX_PAIRS = 6  # distinct two-digit hex words a spaced hex payload (`49 67 6e ...`) cannot do without
# A %XX that stands for a letter, a digit, < > or a space between two words (an ordinary URL escapes punctuation
# and the odd space, not these).
_PERCENT_WORDY = re.compile(r"%(?:[46][1-9A-Fa-f]|[57][0-9Aa]|3[0-9CcEe]|20[A-Za-z]+%20)")
# An entity that stands for a character by number, or a tag's < > (not &amp; &quot; &nbsp;).
_ENTITY_WORDY = re.compile(r"&(?:#[0-9]{1,7}|#[xX][0-9A-Fa-f]{1,6}|lt|gt|[A-Za-z][a-z]{0,5}(?:acute|grave|uml|circ));")
_ESCAPE = re.compile(r"\\(?:u[0-9A-Fa-f]{4}|x[0-9A-Fa-f]{2}|U[0-9A-Fa-f]{8})")
_SPACE = re.compile(r"\s")
_ROT13_NAMED = re.compile(r"rot[\s_-]?13|caesar", re.IGNORECASE)
_ROT13_NAMES = ("rot13", "rot-13", "rot 13", "rot_13", "caesar")  # what _ROT13_NAMED finds, lower-cased

ENCODINGS = frozenset({"HTML entities", "URL encoding", "escapes", "runs", "spaced hex", "ROT13"})


def possible_encodings(words: Iterable[str], everything: str) -> frozenset[str]:
    """The encodings whose markers occur in a list's text (`everything`, lower-cased, and its distinct words): no
    other can hide anything in any of its strings, so decoded() does not look for it there."""
    long_word = False
    pairs: set[str] = set()
    for word in words:
        long_word = long_word or len(word) >= MIN_RUN
        if len(word) == 2 and _HEX_PAIR.fullmatch(word):
            pairs.add(word)
    marked = {"HTML entities": "&" in everything, "URL encoding": "%" in everything, "escapes": "\\" in everything,
              "runs": long_word, "spaced hex": len(pairs) >= _HEX_PAIRS,
              "ROT13": any(name in everything for name in _ROT13_NAMES)}
    return frozenset(encoding for encoding, present in marked.items() if present)


def decoded(text: str, encodings: frozenset[str] = ENCODINGS) -> list[tuple[str, str]]:
    """(encoding, decoded text) for each of `encodings` that hides readable text in `text`; empty for plain text.
    The runs of one string are joined in order: base64 wrapped over lines (MIME's 76 columns) reads on."""
    found: list[tuple[str, str]] = []
    if "HTML entities" in encodings and "&" in text and _ENTITY_WORDY.search(text):
        found.append(("HTML entities", html.unescape(text)))
    if "URL encoding" in encodings and "%" in text and _PERCENT_WORDY.search(text):
        found.append(("URL encoding", urllib.parse.unquote(text)))
    if "escapes" in encodings and "\\" in text and _ESCAPE.search(text):
        found.append(("escapes", _ESCAPE.sub(_unescape, text)))
    if "runs" in encodings:
        runs = _RUN.findall(text)
        found.append(("base64", "".join(_base64(run) for run in runs if not _HEX.fullmatch(run))))
        found.append(("hex", "".join(_hex(run) for run in runs if _HEX.fullmatch(run))))
    if "spaced hex" in encodings:
        found.append(("hex", "".join(map(_hex, _HEX_SPACED.findall(text)))))
    if "ROT13" in encodings and _ROT13_NAMED.search(text):
        found.append(("ROT13", codecs.encode(text, "rot13")))
    return [(kind, piece) for kind, piece in found if piece and piece != text]


def _unescape(match: re.Match[str]) -> str:
    code = int(match.group()[2:], 16)
    return chr(code) if code <= 0x10FFFF else match.group()


def _readable(data: bytes) -> str:
    """The bytes as text when they read as words (UTF-8, nearly all printable, a space in it), else ''."""
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError:
        return ""
    if not _SPACE.search(text):
        return ""
    if text.replace("\n", " ").replace("\t", " ").isprintable():
        return text
    printable = sum(ch.isprintable() or ch in "\n\t" for ch in text)
    return text if printable >= 0.95 * len(text) else ""


def _base64(run: str) -> str:
    body = run.rstrip("=")
    if len(body) % 4 == 1 or body.isalpha():  # not base64, or a long word (a name in camelCase)
        return ""
    try:
        data = base64.b64decode(body.replace("-", "+").replace("_", "/") + "=" * (-len(body) % 4), validate=True)
    except (binascii.Error, ValueError):
        return ""
    return _readable(data)


def _hex(run: str) -> str:
    digits = re.sub(r"[ :,]", "", run)
    try:
        return _readable(bytes.fromhex(digits[:len(digits) // 2 * 2]))
    except ValueError:
        return ""
