"""Read and write lockfiles: pure ASCII JSON, written atomically, loaded with errors that say what to do."""

from __future__ import annotations

import json
from pathlib import Path

from pydantic import ValidationError

from scanner.errors import UsageError
from scanner.json_input import first_validation_error, read_json
from scanner.atomic_write import atomic_write_bytes
from scanner.lock.build import KEY_FIELDS, item_key
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


def load_lock(path: Path) -> LockFile:
    """Load and check a lockfile: valid JSON, a version this scanner knows, the model, and consistent fingerprints."""
    data = read_json(path, "lock", max_bytes=MAX_LOCK_BYTES).value
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
        raise UsageError(f"lock {path} is malformed {first_validation_error(exc)}; {REGENERATE_HINT}") from None
    _check_fingerprints(lock, path)
    return lock


def _check_fingerprints(lock: LockFile, path: Path) -> None:
    """Every stored definition matches its fingerprint, and the name (key) it is compared by is its own."""
    entries = [("tool", t.name, t.fingerprint, t.definition) for t in lock.tools]
    for kind, items in (("prompt", lock.prompts), ("resource", lock.resources), ("template", lock.resource_templates)):
        entries += [(kind, e.key, e.fingerprint, e.definition) for e in items]
    for kind, key, stored, definition in entries:
        if fingerprint(definition) != stored:
            raise UsageError(
                f"lock {path} is inconsistent: the {kind} {json.dumps(key)} does not match its fingerprint "
                f"(edited by hand?); {REGENERATE_HINT}"
            )
        if item_key(definition, *KEY_FIELDS[kind]) != key:
            raise UsageError(f"lock {path} is inconsistent: the {kind} name {json.dumps(key)} does not match its "
                             f"definition (edited by hand?); {REGENERATE_HINT}")
