"""A string matching a simple regular expression (JSON Schema `pattern`), for generated arguments.

Handles literals, escapes (\\d \\w \\s and escaped punctuation), character classes with ranges, `.`, groups with
alternatives (the first one is used), the quantifiers ? * + {n} {n,} {n,m} and the anchors ^ $. Anything else
(look-arounds, back-references, ...) gives None, and so does a result the pattern does not actually match.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

MAX_REPEAT = 1_000  # a larger {n} gives None: the pattern is untrusted
_CLASS_ESCAPES = {"d": "0", "w": "a", "s": " ", "D": "a", "W": "-", "S": "a"}


class _Unsupported(Exception):
    """The pattern uses a construct this generator does not handle."""


@dataclass
class _Reader:
    pattern: str
    pos: int = 0

    def peek(self) -> str | None:
        return self.pattern[self.pos] if self.pos < len(self.pattern) else None

    def take(self) -> str:
        if self.pos >= len(self.pattern):
            raise _Unsupported("unexpected end of pattern")
        char = self.pattern[self.pos]
        self.pos += 1
        return char


def string_for_pattern(pattern: str) -> str | None:
    """A short string that re.search(pattern, ...) matches, or None if the pattern is not simple enough."""
    try:
        re.compile(pattern)
        reader = _Reader(pattern)
        text = _alternatives(reader)
        if reader.peek() is not None:
            return None
    except (_Unsupported, re.error, RecursionError):
        return None
    return text if re.search(pattern, text) else None


def _alternatives(reader: _Reader) -> str:
    """Parse `a|b|c` up to a closing parenthesis or the end; return the text for the first alternative."""
    first = _sequence(reader)
    while reader.peek() == "|":
        reader.take()
        _sequence(reader)
    return first


def _sequence(reader: _Reader) -> str:
    out: list[str] = []
    while reader.peek() not in (None, "|", ")"):
        atom = _atom(reader)
        out.append(atom * _repeat_count(reader))
    return "".join(out)


def _atom(reader: _Reader) -> str:
    char = reader.take()
    if char in "^$":
        return ""
    if char == ".":
        return "a"
    if char == "\\":
        return _escape(reader.take())
    if char == "[":
        return _char_class(reader)
    if char == "(":
        if reader.peek() == "?":
            reader.take()
            if reader.take() != ":":
                raise _Unsupported("look-around or named group")
        text = _alternatives(reader)
        if reader.take() != ")":
            raise _Unsupported("unbalanced group")
        return text
    if char in "*+?{":
        raise _Unsupported("quantifier without an atom")
    return char


def _escape(char: str) -> str:
    if char in _CLASS_ESCAPES:
        return _CLASS_ESCAPES[char]
    if char.isalnum():
        raise _Unsupported(f"escape \\{char}")
    return char


def _char_class(reader: _Reader) -> str:
    negated = reader.peek() == "^"
    if negated:
        reader.take()
    members: list[tuple[str, str]] = []
    first = True
    while first or reader.peek() != "]":
        first = False
        low = reader.take()
        if low == "\\":
            escaped = reader.take()
            low = _CLASS_ESCAPES.get(escaped, escaped)
        if reader.peek() == "-" and reader.pattern[reader.pos + 1: reader.pos + 2] not in ("]", ""):
            reader.take()
            high = reader.take()
            if high == "\\":
                high = reader.take()
            members.append((low, high))
        else:
            members.append((low, low))
    reader.take()
    if negated:
        outside = next((candidate for candidate in "aZ0_-.x " if not _in_class(candidate, members)), None)
        if outside is None:
            raise _Unsupported("negated class excludes every candidate")
        return outside
    return members[0][0]


def _in_class(char: str, members: list[tuple[str, str]]) -> bool:
    return any(low <= char <= high for low, high in members)


def _repeat_count(reader: _Reader) -> int:
    """Read a quantifier after an atom; return how many copies to emit (the minimum, at least one for * and +)."""
    char = reader.peek()
    count = 1
    if char in ("?", "*"):
        reader.take()
        count = 0 if char == "?" else 1
    elif char == "+":
        reader.take()
    elif char == "{":
        match = re.match(r"\{(\d+)(,(\d*))?\}", reader.pattern[reader.pos:])
        if match is None:
            return 1  # a literal brace
        reader.pos += match.end()
        count = int(match.group(1))
        if count > MAX_REPEAT:
            raise _Unsupported("repeat count too large")
    if reader.peek() in ("?", "+"):  # lazy or possessive marker
        reader.take()
    return count
