"""Read and write lockfiles: pure ASCII JSON, written atomically, loaded with errors that say what to do."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from pydantic import ValidationError

from scanner.errors import UsageError
from scanner.lock.atomic import atomic_write_bytes
from scanner.lock.canonical import fingerprint
from scanner.lock.model import LOCK_VERSION, LockFile

MAX_LOCK_BYTES = 64 * 1024 * 1024
REGENERATE_HINT = "move it away and recreate it with `mcp-sandbox lock --from FILE`"


def lock_bytes(lock: LockFile) -> bytes:
    """The exact bytes of a lockfile: sorted keys, two-space indent, every non-ASCII character as a \\u escape."""
    text = json.dumps(lock.model_dump(mode="json"), ensure_ascii=True, indent=2, sort_keys=True)
    return (text + "\n").encode("ascii")


def write_lock(lock: LockFile, path: Path) -> bytes:
    """Write the lock atomically and return the bytes written (what a signature covers)."""
    data = lock_bytes(lock)
    atomic_write_bytes(path, data)
    return data


def read_json_file(path: Path, what: str, max_bytes: int) -> Any:
    """Parse a JSON file, turning every way it can be unreadable into one UsageError line."""
    if not path.is_file():
        raise UsageError(f"{what} {path} does not exist (or is not a file)")
    size = path.stat().st_size
    if size > max_bytes:
        raise UsageError(f"{what} {path} is {size} bytes, over the {max_bytes}-byte limit")
    raw = path.read_bytes()
    try:
        return json.loads(raw.decode("utf-8"), parse_constant=_reject_constant)
    except UnicodeDecodeError as exc:
        raise UsageError(f"{what} {path} is not UTF-8 (byte {exc.start})") from None
    except json.JSONDecodeError as exc:
        where = f"line {exc.lineno} column {exc.colno}"
        raise UsageError(f"{what} {path} is not valid JSON: {exc.msg} at {where}") from None
    except RecursionError:
        raise UsageError(f"{what} {path} is nested too deeply to read") from None
    except ValueError as exc:  # raised by _reject_constant
        raise UsageError(f"{what} {path}: {exc}") from None


def _reject_constant(name: str) -> Any:
    raise ValueError(f"{name} is not a JSON number")


def load_lock(path: Path) -> LockFile:
    """Load and check a lockfile: valid JSON, a version this scanner knows, the model, and consistent fingerprints."""
    data = read_json_file(path, "lock", MAX_LOCK_BYTES)
    if not isinstance(data, dict):
        raise UsageError(f"lock {path} is not an mcp-sandbox lock (expected a JSON object); {REGENERATE_HINT}")
    version = data.get("lock_version")
    if version != LOCK_VERSION:
        raise UsageError(
            f"lock {path} has lock_version {json.dumps(version)}; this scanner reads version {LOCK_VERSION}: "
            f"{REGENERATE_HINT}"
        )
    try:
        lock = LockFile.model_validate(data)
    except ValidationError as exc:
        first = exc.errors()[0]
        where = ".".join(str(p) for p in first["loc"]) or "(top level)"
        raise UsageError(f"lock {path} is malformed at {where}: {first['msg']}; {REGENERATE_HINT}") from None
    _check_fingerprints(lock, path)
    return lock


def _check_fingerprints(lock: LockFile, path: Path) -> None:
    entries = [("tool", t.name, t.fingerprint, t.definition) for t in lock.tools]
    for kind, items in (("prompt", lock.prompts), ("resource", lock.resources), ("template", lock.resource_templates)):
        entries += [(kind, e.key, e.fingerprint, e.definition) for e in items]
    for kind, key, stored, definition in entries:
        if fingerprint(definition) != stored:
            raise UsageError(
                f"lock {path} is inconsistent: the {kind} {json.dumps(key)} does not match its fingerprint "
                f"(edited by hand?); {REGENERATE_HINT}"
            )
