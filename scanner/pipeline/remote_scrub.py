"""The remote report's redaction when the plain one cannot be read back (`scan --url`).

`remote.redacted` replaces every secret value in the report's JSON text, keys and all, and reads the text back. A
secret that is also one of the report's own words or JSON's (a header value `remote`, `true`, `1`) rewrites the
report's structure there (`"kind": "[redacted]"`, `"count": [redacted]`), and reading it back failed: an internal
error instead of the scan. `scrubbed` is the fallback: every string value, field by field, is redacted, never a
field's name, a dict's key or a Literal/enum field (the report's own vocabulary, which shows nothing of a secret)."""

from __future__ import annotations

import enum
import typing
from typing import Any

from pydantic import BaseModel

from scanner.pipeline.remote_target import RemoteTarget, redact


def scrubbed(value: Any, remote: RemoteTarget) -> tuple[Any, int]:
    """`value` (a model, or JSON-like data) with every secret in its string values replaced, and how many were."""
    if isinstance(value, enum.Enum):
        return value, 0
    if isinstance(value, str):
        return redact(value, remote)
    if isinstance(value, BaseModel):
        return _scrubbed_model(value, remote)
    if isinstance(value, list | tuple):
        items = [scrubbed(item, remote) for item in value]
        return type(value)(item for item, _ in items), sum(found for _, found in items)
    if isinstance(value, dict):
        pairs = {key: scrubbed(item, remote) for key, item in value.items()}
        return {key: item for key, (item, _) in pairs.items()}, sum(found for _, found in pairs.values())
    return value, 0


def _scrubbed_model(model: BaseModel, remote: RemoteTarget) -> tuple[BaseModel, int]:
    updates: dict[str, Any] = {}
    found = 0
    for name, field in type(model).model_fields.items():
        if _is_vocabulary(field.annotation):
            continue
        clean, count = scrubbed(getattr(model, name), remote)
        if count or clean != getattr(model, name):
            updates[name] = clean
        found += count
    return (model.model_copy(update=updates) if updates else model), found


def _is_vocabulary(annotation: Any) -> bool:
    """A Literal (or an optional one): the report's own words, never a server's."""
    if typing.get_origin(annotation) is typing.Literal:
        return True
    return any(_is_vocabulary(arg) for arg in typing.get_args(annotation) if arg is not type(None))
