"""RFC 8785 (JCS) canonical JSON and the SHA-256 fingerprints built on it."""

from __future__ import annotations

import hashlib
import math
from typing import Any

import rfc8785

# I-JSON / JavaScript numbers: integers outside this range are not exact, so they are canonicalised as doubles,
# exactly as a JavaScript client would read them.
_MAX_SAFE_INTEGER = 2**53 - 1
FINGERPRINT_PREFIX = "sha256:"


MAX_DEPTH = 128


def json_depth(value: Any) -> int:
    """How many containers deep a JSON value nests (iteratively)."""
    deepest = 0
    stack: list[tuple[Any, int]] = [(value, 0)]
    while stack:
        item, depth = stack.pop()
        if isinstance(item, dict):
            stack.extend((v, depth + 1) for v in item.values())
        elif isinstance(item, (list, tuple)):
            stack.extend((v, depth + 1) for v in item)
        deepest = max(deepest, depth)
    return deepest


def normalised_copy(value: Any) -> Any:
    """A copy of a parsed JSON value in the domain RFC 8785 accepts (iteratively, so deep input cannot overflow)."""
    return _jsonable(value)


def _jsonable(value: Any) -> Any:
    root: list[Any] = [None]
    stack: list[tuple[Any, Any, Any]] = [(value, root, 0)]
    while stack:
        item, parent, key = stack.pop()
        parent[key] = _scalar_or_container(item)
        if isinstance(item, dict):
            for k, v in item.items():
                stack.append((v, parent[key], str(k)))
        elif isinstance(item, (list, tuple)):
            for i, v in enumerate(item):
                stack.append((v, parent[key], i))
    return root[0]


def _scalar_or_container(item: Any) -> Any:
    if isinstance(item, dict):
        return {}
    if isinstance(item, (list, tuple)):
        return [None] * len(item)
    if isinstance(item, bool) or item is None or isinstance(item, str):
        return item
    if isinstance(item, int):
        return item if -_MAX_SAFE_INTEGER <= item <= _MAX_SAFE_INTEGER else _as_double(item)
    if isinstance(item, float):
        return item if math.isfinite(item) else repr(item)
    return repr(item)


def _as_double(item: int) -> Any:
    """An integer as a JavaScript client reads it: a double, or Infinity past the double range (float() would raise
    OverflowError there, and a served `1e400` already parses to inf), kept as the text an infinite float gets."""
    try:
        return float(item)
    except OverflowError:
        return repr(math.inf if item > 0 else -math.inf)


def canonical_json(value: Any) -> bytes:
    """The RFC 8785 canonical serialisation of a JSON value (UTF-8 bytes)."""
    return rfc8785.dumps(_jsonable(value))


def sha256_hex(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def fingerprint(value: Any) -> str:
    """`sha256:<hex>` over the canonical JSON of a whole definition."""
    return FINGERPRINT_PREFIX + sha256_hex(canonical_json(value))


def same_json(a: Any, b: Any) -> bool:
    """True when two JSON values are equal as JSON: key order and number spelling (1 vs 1.0) are ignored, but
    true is not 1 (unlike Python's ==). Iterative, so deep values cannot overflow the stack."""
    stack: list[tuple[Any, Any]] = [(a, b)]
    while stack:
        x, y = stack.pop()
        if isinstance(x, dict) and isinstance(y, dict):
            if x.keys() != y.keys():
                return False
            stack.extend((x[k], y[k]) for k in x)
        elif isinstance(x, (list, tuple)) and isinstance(y, (list, tuple)):
            if len(x) != len(y):
                return False
            stack.extend(zip(x, y, strict=True))
        elif not _same_scalar(x, y):
            return False
    return True


def _same_scalar(x: Any, y: Any) -> bool:
    if isinstance(x, bool) or isinstance(y, bool) or x is None or y is None:
        return x is y
    if isinstance(x, (int, float)) and isinstance(y, (int, float)):
        return _scalar_or_container(x) == _scalar_or_container(y)
    return type(x) is type(y) and x == y
