"""A TOML file the package ships, read through the parsed copy beside it (`NAME.parsed.json`: the TOML's sha256 and
its data as JSON). tomllib is pure Python: it takes 10-15 ms to parse the rules catalogue each command loads, where
its JSON copy loads in under 1 ms. A TOML edited since its copy was written is parsed itself (slower, never stale),
and the test suite says when to write the copies again:

    .venv/bin/python -m scanner.write_tables
"""

from __future__ import annotations

import hashlib
from importlib.resources.abc import Traversable
from pathlib import Path
from typing import Any

from scanner.derived_json import read_derived, write_derived

COPY_SUFFIX = ".parsed.json"


def read_toml(folder: Traversable, name: str) -> dict[str, Any]:
    """The data of the TOML file `name` in `folder` (a package's files()), from its parsed copy when the copy is of
    this very text."""
    text = folder.joinpath(name).read_text(encoding="utf-8")
    copy = read_derived(folder.joinpath(name + COPY_SUFFIX))  # None: the TOML itself, so the writer still starts
    if isinstance(copy, dict) and copy.get("sha256") == _digest(text) and isinstance(copy.get("data"), dict):
        return copy["data"]
    return _parse(text)


def copy_of(text: str) -> dict[str, Any]:
    """The parsed copy of a TOML text."""
    return {"sha256": _digest(text), "data": _parse(text)}


def write_copy(path: Path) -> Path:
    """Write the parsed copy of the TOML file at `path` beside it; its path."""
    target = path.with_name(path.name + COPY_SUFFIX)
    write_derived(target, copy_of(path.read_text(encoding="utf-8")))
    return target


def _digest(text: str) -> str:
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


def _parse(text: str) -> dict[str, Any]:
    import tomllib  # only for a TOML without a current copy (and to write one)

    return tomllib.loads(text)
