"""The installed version of mcp-sandbox, read from its package metadata (pyproject.toml's `version`, as installed).

`importlib.metadata.version()` costs ~35 ms at start-up (it imports `email`, `zipfile` and `csv` to parse one header),
which every command paid before its first line. This reads the same file the same way for the plain case (the first
`sys.path` folder holding exactly one `<name>-*.dist-info` or `.egg-info`, searched in `sys.path` order with the
same name normalisation), and hands every other case to importlib.metadata: a zip or `.egg` on the path, two
candidate folders side by side, metadata without a Version header."""

from __future__ import annotations

import os
import re
import sys

INFO_SUFFIXES = (".dist-info", ".egg-info")
METADATA_FILES = ("METADATA", "PKG-INFO")  # the order importlib.metadata reads them in


def normalized(name: str) -> str:
    """PEP 503 normalisation with underscores (as importlib.metadata's Prepared.normalize)."""
    return re.sub(r"[-_.]+", "-", name).lower().replace("-", "_")


def _candidates(folder: str, wanted: str) -> list[str] | None:
    """The metadata folders of `wanted` directly in `folder` ([] when none), or None when importlib.metadata would
    look differently here (a zip file, an `.egg`)."""
    if folder.lower().endswith(".egg"):
        return None
    try:
        children = os.listdir(folder or ".")
    except NotADirectoryError:
        return None
    except OSError:
        return []
    found = []
    for child in children:
        low = child.lower()
        if low.endswith(INFO_SUFFIXES) and normalized(low.rpartition(".")[0].partition("-")[0]) == wanted:
            found.append(os.path.join(folder, child))
    return found


def header(text: str, field: str) -> str | None:
    """One header of an RFC 822 metadata file: the value of the first `Field:` line before the first blank line."""
    prefix = f"{field.lower()}:"
    for line in text.splitlines():
        if not line.strip():
            break
        if line.lower().startswith(prefix):
            return line[len(prefix):].strip() or None
    return None


def fast_version(name: str, path: list[str] | None = None) -> str | None:
    """The version importlib.metadata would report for `name`, when it can be read without it; else None."""
    wanted = normalized(name)
    for folder in sys.path if path is None else path:
        found = _candidates(folder, wanted)
        if found is None or len(found) > 1:
            return None
        if found:
            return _read_version(found[0])
    return None


def _read_version(info: str) -> str | None:
    for file in METADATA_FILES:
        try:
            with open(os.path.join(info, file), encoding="utf-8") as handle:
                return header(handle.read(), "Version")
        except FileNotFoundError:
            continue
        except (OSError, UnicodeDecodeError):
            return None
    return None


def installed_version(name: str = "mcp-sandbox") -> str:
    """The installed version of `name` (importlib.metadata.version, cheaply when it can be)."""
    version = fast_version(name)
    if version is None:
        from importlib import metadata

        version = metadata.version(name)
    return version
