"""The literal text a regular expression cannot match without, read from its parse tree: a cheap necessary condition
checked with `in` before the expression is searched (clean text then never runs it).

`required_literals(pattern)` gives groups of alternatives: a match is only possible when, for every group, the text
holds one of the group's strings. Only what must appear is kept: a run of literal characters, every alternative of
a branch (one required string each, or the branch adds nothing), a repeat taken at least once. Anything else (classes,
optional parts, assertions, case-insensitive parts) adds nothing, so the condition may be weak but is never wrong.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from typing import Any

try:  # the parser `re` compiles with (Python 3.11+); without it every pattern is simply always searched
    from re import _constants as sre_constants  # type: ignore[attr-defined]
    from re import _parser as sre_parse  # type: ignore[attr-defined]
except ImportError:  # pragma: no cover - a Python that moved the parser
    sre_parse = sre_constants = None

Requirement = frozenset[str]


def required_literals(pattern: re.Pattern[str]) -> tuple[tuple[str, ...], ...]:
    """What `pattern` needs in the text to match anywhere (no requirement: always search)."""
    if sre_parse is None or pattern.flags & re.IGNORECASE or not isinstance(pattern.pattern, str):
        return ()
    groups = set(_sequence(list(sre_parse.parse(pattern.pattern, pattern.flags))))
    # The most selective group first (`could_match` stops at the first one missing), its rarest strings first.
    ordered = sorted(groups, key=lambda group: (-_selectivity(group), len(group), sorted(group)))
    return tuple(tuple(sorted(group, key=lambda option: (-_selectivity(frozenset({option})), option)))
                 for group in ordered)


def could_match(requirements: Sequence[Sequence[str]], text: str) -> bool:
    for group in requirements:
        for option in group:
            if option in text:
                break
        else:
            return False
    return True


def _sequence(items: list[tuple[Any, Any]]) -> list[Requirement]:
    """The requirements of ops matched one after the other; consecutive literal characters form one string."""
    found: list[Requirement] = []
    run = ""
    for op, value in items:
        if op is sre_constants.LITERAL:
            run += chr(value)
            continue
        if run:
            found.append(frozenset({run}))
            run = ""
        found += _op(op, value)
    if run:
        found.append(frozenset({run}))
    return found


def _op(op: Any, value: Any) -> list[Requirement]:
    if op is sre_constants.SUBPATTERN:
        _group, add_flags, _del_flags, sub = value
        return [] if add_flags & re.IGNORECASE else _sequence(list(sub))
    if op in (sre_constants.MAX_REPEAT, sre_constants.MIN_REPEAT, getattr(sre_constants, "POSSESSIVE_REPEAT", None)):
        low, _high, sub = value
        return _sequence(list(sub)) if low >= 1 else []
    if op is sre_constants.BRANCH:
        return _branch(value[1])
    return []


BRANCH_GROUPS = 2
COMMON_MARKS = frozenset(" .,'-")


def _selectivity(group: Requirement) -> int:
    """How rarely a group's shortest string turns up in prose: longer is rarer, and symbols (`@`, `://`) more so."""
    return min(len(option) + 8 * sum(not (ch.isalnum() or ch in COMMON_MARKS) for ch in option) for option in group)


def _branch(alternatives: list[Any]) -> list[Requirement]:
    """A match takes one alternative, so for any pick of one requirement per alternative their union is required:
    the union of each one's most selective requirement, then of the next. Nothing when an alternative needs none."""
    ranked = []
    for alternative in alternatives:
        # Ties in selectivity broken by the strings themselves: the same groups whatever the process's hash seed
        # (stored_literals.py keeps them, and a test compares them with this).
        needs = sorted(_sequence(list(alternative)), key=lambda need: (-_selectivity(need), sorted(need)))
        if not needs:
            return []
        ranked.append(needs)
    return sorted({frozenset().union(*(needs[min(rank, len(needs) - 1)] for needs in ranked))
                   for rank in range(BRANCH_GROUPS)}, key=sorted)
