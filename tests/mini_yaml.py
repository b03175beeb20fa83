"""A purpose-built reader for the YAML subset our CI files use (action.yml, .github/workflows/ci.yml,
.pre-commit-hooks.yaml), so the tests need no PyYAML: block mappings and sequences by indentation, plain / single- /
double-quoted scalars, `|` and `>` block scalars, comments, and `[a, b]` flow lists of plain scalars. Scalars stay
strings (no bool or number typing). Anything outside the subset raises ValueError rather than being guessed at."""

from __future__ import annotations

import json
import re
from typing import Any

_KEY = re.compile(r"""(?P<key>[A-Za-z0-9_.$/-][^:#]*?|"[^"]*"|'[^']*'):(?:\s+(?P<rest>.*))?\Z""")


class _Line:
    def __init__(self, number: int, raw: str) -> None:
        self.number = number
        self.raw = raw
        self.indent = len(raw) - len(raw.lstrip(" "))
        self.text = raw.strip()

    @property
    def blank(self) -> bool:
        return not self.text or self.text.startswith("#")


def loads(text: str) -> Any:
    lines = [_Line(n, raw.rstrip()) for n, raw in enumerate(text.splitlines(), 1)]
    for line in lines:
        if not line.blank and line.raw[: line.indent + 1].count("\t"):
            raise ValueError(f"line {line.number}: tab indentation")
    reader = _Reader(lines)
    start = reader.skip(0)
    if start >= len(lines):
        return None
    value, end = reader.block(start, lines[start].indent)
    end = reader.skip(end)
    if end < len(lines):
        raise ValueError(f"line {lines[end].number}: unexpected indentation")
    return value


class _Reader:
    def __init__(self, lines: list[_Line]) -> None:
        self.lines = lines

    def skip(self, i: int) -> int:
        while i < len(self.lines) and self.lines[i].blank:
            i += 1
        return i

    def block(self, i: int, indent: int) -> tuple[Any, int]:
        if self.lines[i].text.startswith("- ") or self.lines[i].text == "-":
            return self.sequence(i, indent)
        return self.mapping(i, indent, None)

    def mapping(self, i: int, indent: int, first: str | None) -> tuple[dict[str, Any], int]:
        result: dict[str, Any] = {}
        while True:
            i = self.skip(i) if first is None else i
            if i >= len(self.lines):
                return result, i
            line = self.lines[i]
            text = first if first is not None else line.text
            if first is None and (line.indent < indent or text.startswith("- ")):
                return result, i
            if first is None and line.indent > indent:
                raise ValueError(f"line {line.number}: unexpected indentation")
            first = None
            match = _KEY.match(_strip_comment(text))
            if not match:
                raise ValueError(f"line {line.number}: expected `key: value`, got {text!r}")
            key = _scalar(match["key"].strip(), line.number)
            if key in result:
                raise ValueError(f"line {line.number}: duplicate key {key!r}")
            rest = (match["rest"] or "").strip()
            if rest in ("|", "|-", ">", ">-"):
                result[key], i = self.block_scalar(i + 1, indent, rest)
                continue
            if rest:
                result[key] = _scalar(rest, line.number)
                i += 1
                continue
            nxt = self.skip(i + 1)
            if nxt < len(self.lines) and (self.lines[nxt].indent > indent or (
                    self.lines[nxt].indent == indent and self.lines[nxt].text.startswith("- "))):
                result[key], i = self.block(nxt, self.lines[nxt].indent)
            else:
                result[key], i = None, i + 1

    def sequence(self, i: int, indent: int) -> tuple[list[Any], int]:
        result: list[Any] = []
        while True:
            i = self.skip(i)
            if i >= len(self.lines):
                return result, i
            line = self.lines[i]
            if line.indent != indent or not (line.text.startswith("- ") or line.text == "-"):
                if line.indent > indent:
                    raise ValueError(f"line {line.number}: unexpected indentation")
                return result, i
            rest = line.text[1:].strip()
            if not rest:
                nxt = self.skip(i + 1)
                value, i = self.block(nxt, self.lines[nxt].indent)
            elif _KEY.match(_strip_comment(rest)):
                value, i = self.mapping(i, indent + 2, rest)
            else:
                value, i = _scalar(rest, line.number), i + 1
            result.append(value)

    def block_scalar(self, i: int, indent: int, style: str) -> tuple[str, int]:
        body: list[_Line] = []
        while i < len(self.lines) and (not self.lines[i].text or self.lines[i].indent > indent):
            body.append(self.lines[i])
            i += 1
        while body and not body[-1].text:
            body.pop()
        if not body:
            return "", i
        cut = min(line.indent for line in body if line.text)
        parts = [line.raw[cut:] for line in body]
        text = "\n".join(parts) if style.startswith("|") else " ".join(p.strip() for p in parts)
        return text + ("" if style.endswith("-") else "\n"), i


def _strip_comment(text: str) -> str:
    quote = None
    for pos, ch in enumerate(text):
        if quote:
            if ch == quote:
                quote = None
        elif ch in "'\"" and (pos == 0 or text[pos - 1] in " :[,"):
            quote = ch
        elif ch == "#" and (pos == 0 or text[pos - 1] == " "):
            return text[:pos].rstrip()
    return text


def _scalar(text: str, number: int) -> Any:
    text = _strip_comment(text)
    if text.startswith('"'):
        if not text.endswith('"') or len(text) < 2:
            raise ValueError(f"line {number}: unterminated double-quoted scalar")
        return json.loads(text)
    if text.startswith("'"):
        if not text.endswith("'") or len(text) < 2:
            raise ValueError(f"line {number}: unterminated single-quoted scalar")
        return text[1:-1].replace("''", "'")
    if text.startswith("["):
        if not text.endswith("]"):
            raise ValueError(f"line {number}: flow sequence must fit on one line")
        inner = text[1:-1].strip()
        return [_scalar(part.strip(), number) for part in inner.split(",")] if inner else []
    if text.startswith(("{", "&", "*", "!", "%", "@", "`")):
        raise ValueError(f"line {number}: {text[0]!r} is outside the YAML subset this reader supports")
    return text
