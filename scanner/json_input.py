"""Read a JSON document the user handed us (a file, or `-` for standard input), with every way it can be wrong turned
into one UsageError line: missing, not a file, over the size limit, not UTF-8 (a UTF-8 BOM is accepted), not JSON,
`NaN`/`Infinity` (not JSON numbers), nested deeper than MAX_JSON_DEPTH, an integer too long to convert. Also: a
pydantic validation error as one line.

What is read is data, whatever it holds: a lone surrogate (`"\\ud800"`, which no UTF-8 output can carry) is kept as
the visible text of its escape; duplicate keys keep the last value, as every JSON reader does."""

from __future__ import annotations

import json
import re
import sys
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, BinaryIO

from pydantic import ValidationError

from scanner.errors import UsageError
from sandbox.core.untrusted import visible_escape

STDIN = "-"
MAX_INPUT_BYTES = 64 * 1024 * 1024
# Deeper than any schema a tool needs, shallow enough that every reader after the parser (rules, views, the lock) can
# walk it; deeper input the parser itself refuses (RecursionError) gets the same message.
MAX_JSON_DEPTH = 512
_SURROGATE_ESCAPE = re.compile(r"\\u[dD][89a-fA-F]")
_LONE_SURROGATE = re.compile("[\ud800-\udfff]")


@dataclass(frozen=True)
class JsonInput:
    """A parsed document with the text it was parsed from (for finding where a definition starts)."""

    name: str  # the path as given, or `standard input`
    value: Any
    text: str = field(repr=False)
    size: int


def is_stdin(source: Path | str) -> bool:
    return str(source) == STDIN


def display_name(source: Path | str) -> str:
    return "standard input" if is_stdin(source) else str(source)


def read_json(source: Path | str, what: str, *, max_bytes: int = MAX_INPUT_BYTES,
              stdin: BinaryIO | None = None) -> JsonInput:
    """Read and parse `source`: `what` names the input in errors ("tools file", "lock", "fixtures file")."""
    name = f"{what} {display_name(source)}"
    data = _read_stdin(name, max_bytes, stdin) if is_stdin(source) else _read_file(Path(source), name, max_bytes)
    text = _decode(name, data)
    return JsonInput(name=display_name(source), value=parse_json(name, text), text=text, size=len(data))


def _read_file(path: Path, name: str, max_bytes: int) -> bytes:
    if not path.exists():
        raise UsageError(f"{name} does not exist; check the path, or pass - to read standard input")
    if not path.is_file():
        raise UsageError(f"{name} is not a regular file; pass a JSON file (or - for standard input)")
    size = path.stat().st_size
    if size > max_bytes:
        raise UsageError(f"{name} is {size:,} bytes, over the {max_bytes:,}-byte limit; pass a smaller file")
    try:
        return path.read_bytes()
    except OSError as exc:
        raise UsageError(f"cannot read {name}: {exc.strerror or exc}") from exc


def _read_stdin(name: str, max_bytes: int, stdin: BinaryIO | None) -> bytes:
    stream = stdin if stdin is not None else sys.stdin.buffer
    data = stream.read(max_bytes + 1)
    if len(data) > max_bytes:
        raise UsageError(f"{name} is over the {max_bytes:,}-byte limit")
    return data


def _decode(name: str, data: bytes) -> str:
    try:
        return data.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        raise UsageError(f"{name} is not valid UTF-8 (byte {exc.start}); save it as UTF-8 JSON") from None


def _reject_constant(constant: str) -> Any:
    raise ValueError(f"{constant} is not a JSON number")


def nesting_depth(value: Any) -> int:
    """How many arrays and objects deep a parsed JSON value nests (level by level: any depth is safe to measure)."""
    level = [value] if isinstance(value, (dict, list)) else []
    depth = 0
    while level:
        depth += 1
        below: list[Any] = []
        for item in level:
            below += [child for child in (item.values() if isinstance(item, dict) else item)
                      if isinstance(child, (dict, list))]
        level = below
    return depth


def parse_json(name: str, text: str, *, max_depth: int = MAX_JSON_DEPTH) -> Any:
    """Parse JSON text as data: every way it can be wrong is one UsageError line naming `name`."""
    try:
        value = json.loads(text, parse_constant=_reject_constant)
    except json.JSONDecodeError as exc:
        problem = exc.msg.removesuffix(" at")  # "Unterminated string starting at" names its place itself
        raise UsageError(f"{name} is not valid JSON: {problem} at line {exc.lineno} column {exc.colno}") from None
    except RecursionError:
        raise _too_deep(name, max_depth) from None
    except ValueError as exc:  # from _reject_constant, or an integer of more digits than Python converts
        raise UsageError(f"{name} is not valid JSON: {_number_problem(exc)}") from None
    if nesting_depth(value) > max_depth:
        raise _too_deep(name, max_depth)
    return without_lone_surrogates(value) if _SURROGATE_ESCAPE.search(text) else value


def _too_deep(name: str, max_depth: int) -> UsageError:
    return UsageError(f"{name} is nested too deeply to read as JSON (more than {max_depth} levels of arrays and "
                      "objects)")


def _number_problem(exc: ValueError) -> str:
    message = str(exc)
    if "integer string conversion" in message:
        return f"a number has more than {sys.get_int_max_str_digits():,} digits"
    return message


def _visible(text: str) -> str:
    return _LONE_SURROGATE.sub(lambda m: visible_escape(m.group()), text)


def without_lone_surrogates(value: Any) -> Any:
    """A copy of a parsed value with every lone surrogate in its strings and keys as the text of its escape
    (`\\ud800`); iterative, so any depth the parser accepted is safe."""
    root: list[Any] = [value]
    stack: list[tuple[Any, Any]] = [(root, 0)]
    while stack:
        parent, key = stack.pop()
        item = parent[key]
        if isinstance(item, str):
            parent[key] = _visible(item)
        elif isinstance(item, list):
            stack.extend((item, i) for i in range(len(item)))
        elif isinstance(item, dict):
            fixed = {_visible(k): v for k, v in item.items()}
            parent[key] = fixed
            stack.extend((fixed, k) for k in fixed)
    return root[0]


def first_validation_error(exc: ValidationError) -> str:
    """The first problem pydantic found, as `at LOCATION: MESSAGE` (LOCATION dotted; `(top level)` for the root)."""
    first = exc.errors()[0]
    where = ".".join(str(part) for part in first["loc"]) or "(top level)"
    return f"at {where}: {first['msg']}"
