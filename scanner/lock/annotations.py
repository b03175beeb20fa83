"""Compare tool annotations the way a JavaScript client reads them, and catch a tool that claims to be safer."""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

from pydantic import TypeAdapter, ValidationError

from scanner.lock.canonical import same_json
from scanner.report.model import Severity

# The MCP spec's defaults when a hint is absent, and the value that would make the tool look safer.
HINT_DEFAULTS: dict[str, bool] = {"readOnlyHint": False, "destructiveHint": True, "idempotentHint": False,
                                  "openWorldHint": True}
SAFER_VALUE: dict[str, bool] = {"readOnlyHint": True, "destructiveHint": False, "idempotentHint": True,
                                "openWorldHint": False}
TITLE_KEY = "title"
_LAX_BOOL: TypeAdapter[bool] = TypeAdapter(bool)


@dataclass(frozen=True)
class AnnotationDelta:
    severity: Severity
    detail: str


def js_truthy(value: Any) -> bool:
    """JavaScript truthiness of a parsed JSON value: false, 0, NaN, "" and null are falsy; objects, arrays are not."""
    if value is None or value is False:
        return False
    if isinstance(value, (int, float)) and not isinstance(value, bool):
        return value != 0 and not math.isnan(value)
    if isinstance(value, str):
        return value != ""
    return True


def effective_hint(annotations: dict[str, Any], hint: str) -> bool:
    return js_truthy(annotations[hint]) if hint in annotations else HINT_DEFAULTS[hint]


def python_hint(annotations: dict[str, Any], hint: str) -> bool:
    """The hint as the Python SDK's model reads it: pydantic's lax bool ("false", "no", "off", "0" are false), the
    spec's default when absent or null. A value the model refuses loses the tool for that client, so the JavaScript
    reading stands in for it."""
    if annotations.get(hint) is None:
        return HINT_DEFAULTS[hint]
    try:
        return _LAX_BOOL.validate_python(annotations[hint])
    except ValidationError:
        return effective_hint(annotations, hint)


def as_annotations(value: Any) -> dict[str, Any]:
    """Annotations that are not an object are read as none at all, as a client would."""
    return value if isinstance(value, dict) else {}


def compare_annotations(old: Any, new: Any) -> list[AnnotationDelta]:
    """Differences other than the title: hints first (by effective value), then any other key."""
    before, after = as_annotations(old), as_annotations(new)
    deltas = [d for hint in HINT_DEFAULTS if (d := _hint_delta(before, after, hint)) is not None]
    for key in sorted((set(before) | set(after)) - set(HINT_DEFAULTS) - {TITLE_KEY}):
        if not same_json(before.get(key), after.get(key)) or (key in before) != (key in after):
            deltas.append(AnnotationDelta("info", f"{key} changed"))
    if _malformed(old) or _malformed(new):
        deltas.append(AnnotationDelta("warning", "annotations are not an object (read as none)"))
    return deltas


def _malformed(annotations: Any) -> bool:
    return annotations is not None and not isinstance(annotations, dict)


def _hint_delta(before: dict[str, Any], after: dict[str, Any], hint: str) -> AnnotationDelta | None:
    """Read by JavaScript and by the Python SDK: looking safer to either is an error (a string such as "false" is
    truthy to one and false to the other)."""
    readings = [(read(before, hint), read(after, hint)) for read in (effective_hint, python_hint)]
    shown = f"{hint}: {_shown(before, hint)} -> {_shown(after, hint)}"
    if any(was != now and now == SAFER_VALUE[hint] for was, now in readings):
        return AnnotationDelta("error", f"claims to be safer: {shown}")
    if any(was != now for was, now in readings):
        return AnnotationDelta("warning", f"now declares more risk: {shown}")
    if (hint in before) != (hint in after) or not same_json(before.get(hint), after.get(hint)):
        return AnnotationDelta("info", f"same meaning, spelled differently: {shown}")
    return None


def _shown(annotations: dict[str, Any], hint: str) -> str:
    if hint not in annotations:
        return f"absent (= {str(HINT_DEFAULTS[hint]).lower()})"
    value = annotations[hint]
    return "null" if value is None else (str(value).lower() if isinstance(value, bool) else repr(value))
