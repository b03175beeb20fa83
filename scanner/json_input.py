"""Read a JSON document the user handed us (a file, or `-` for standard input), with every way it can be wrong turned
into one UsageError line: missing, not a file, over the size limit, not UTF-8 (a UTF-8 BOM is accepted), not JSON,
`NaN`/`Infinity` (not JSON numbers), nested too deeply for the parser. Also: a pydantic validation error as one line."""

from __future__ import annotations

import json
import sys
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, BinaryIO

from pydantic import ValidationError

from scanner.errors import UsageError

STDIN = "-"
MAX_INPUT_BYTES = 64 * 1024 * 1024


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
    return JsonInput(name=display_name(source), value=_parse(name, text), text=text, size=len(data))


def _read_file(path: Path, name: str, max_bytes: int) -> bytes:
    if not path.exists():
        raise UsageError(f"{name} does not exist")
    if not path.is_file():
        raise UsageError(f"{name} is not a regular file")
    size = path.stat().st_size
    if size > max_bytes:
        raise UsageError(f"{name} is {size:,} bytes, over the {max_bytes:,}-byte limit")
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


def _parse(name: str, text: str) -> Any:
    try:
        return json.loads(text, parse_constant=_reject_constant)
    except json.JSONDecodeError as exc:
        raise UsageError(f"{name} is not valid JSON: {exc.msg} at line {exc.lineno} column {exc.colno}") from None
    except RecursionError:
        raise UsageError(f"{name} is nested too deeply to read as JSON") from None
    except ValueError as exc:  # from _reject_constant
        raise UsageError(f"{name} is not valid JSON: {exc}") from None


def first_validation_error(exc: ValidationError) -> str:
    """The first problem pydantic found, as `at LOCATION: MESSAGE` (LOCATION dotted; `(top level)` for the root)."""
    first = exc.errors()[0]
    where = ".".join(str(part) for part in first["loc"]) or "(top level)"
    return f"at {where}: {first['msg']}"
