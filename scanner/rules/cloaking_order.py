"""Set order is no cloaking: P10 puts back, in the second listing, what differs from the first only in order.

Each server of a scan is a process of its own, and a Python server draws a fresh string-hash seed per process, so a
list it builds from a set comes out in another order in each. mcp-shell-server 1.1.14 writes its allow-list into
`shell_execute`'s description ("Allowed commands: pwd, ls, cat, touch, echo"); the second session read "cat, echo,
pwd, ls, touch" and P10 called that cloaking (an error: a BLOCK). The same holds for an `enum` built from a set.

What is put back: a `description` or `title` string that equals the first's once the items of each run of
comma-separated one-word items (`a, b, c`) are sorted, and an `enum` list holding the same values in another order.
Everything else is compared as served: words moved out of such a run, a longer or shorter list, another value.
"""

from __future__ import annotations

import json
import re
from typing import Any

from scanner.probes.tooldef import tool_name

_ITEM = r"[\w@+/-]+(?:\.[\w@+/-]+)*"  # a word, a file name or a version; a sentence's closing dot is not part of it
_LIST_RUN = re.compile(rf"{_ITEM}(?:, {_ITEM})+")
_TEXT_KEYS = frozenset({"description", "title"})
_MAX_DEPTH = 64  # a schema nested past this is compared as served


def order_free(text: str) -> str:
    """The text with the items of each comma-separated run of one-word items sorted."""
    return _LIST_RUN.sub(lambda run: ", ".join(sorted(run.group(0).split(", "))), text)


def reordered_text(first: Any, second: Any) -> bool:
    """Two different strings that are the same up to the order of their comma-separated lists."""
    return (isinstance(first, str) and isinstance(second, str) and first != second
            and order_free(first) == order_free(second))


def _reordered_enum(first: Any, second: Any) -> bool:
    if not (isinstance(first, list) and isinstance(second, list)) or len(first) != len(second) or first == second:
        return False
    try:
        return sorted(json.dumps(v, sort_keys=True) for v in first) == sorted(json.dumps(v, sort_keys=True)
                                                                              for v in second)
    except (TypeError, ValueError, RecursionError):
        return False


def _aligned(first: Any, second: Any, depth: int = 0) -> Any:
    """`second` with every text and enum that only reorders its counterpart in `first` replaced by that one."""
    if depth > _MAX_DEPTH:
        return second
    if isinstance(first, dict) and isinstance(second, dict):
        out = {}
        for key, value in second.items():
            old = first.get(key)
            if (key in _TEXT_KEYS and reordered_text(old, value)) or (key == "enum" and _reordered_enum(old, value)):
                out[key] = old
            else:
                out[key] = _aligned(old, value, depth + 1) if key in first else value
        return out
    if isinstance(first, list) and isinstance(second, list) and len(first) == len(second):
        return [_aligned(old, new, depth + 1) for old, new in zip(first, second)]
    return second


def align_order(first: list[dict[str, Any]], second: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """The second listing, each tool aligned with the first listing's tool of the same name (if any)."""
    by_name = {tool_name(tool): tool for tool in first if isinstance(tool, dict) and tool_name(tool)}
    return [_aligned(by_name[tool_name(tool)], tool) if isinstance(tool, dict) and tool_name(tool) in by_name
            else tool for tool in second]


def aligned_instructions(first: str | None, second: str | None) -> str | None:
    """The second session's instructions, or the first's when they only reorder a list."""
    return first if reordered_text(first, second) else second
