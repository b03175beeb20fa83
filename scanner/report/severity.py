"""The one severity vocabulary: an ordered, str-valued enum that gates, views and sorting all read.

A finding's or a lock change's severity serialises as the plain strings "error", "warning" and "info"; the order
(info < warning < error) lives here and nowhere else.
"""

from __future__ import annotations

from collections.abc import Iterable
from enum import StrEnum


class Severity(StrEnum):
    """How much a finding matters. Members are listed most severe first (the order the report schema shows)."""

    ERROR = "error"
    WARNING = "warning"
    INFO = "info"

    @property
    def rank(self) -> int:
        """0 for info, 1 for warning, 2 for error: higher is more severe."""
        return _RANK[self]


_RANK: dict[Severity, int] = {Severity.INFO: 0, Severity.WARNING: 1, Severity.ERROR: 2}
ASCENDING: tuple[Severity, ...] = (Severity.INFO, Severity.WARNING, Severity.ERROR)
NEVER = "never"  # the --fail-on level that no finding meets
FAIL_ON_LEVELS: tuple[str, ...] = (*ASCENDING, NEVER)


def rank(severity: str) -> int:
    """The rank of a severity given as the enum or its string value (ValueError for anything else)."""
    return Severity(severity).rank


def at_least(severity: str, threshold: str) -> bool:
    """Whether `severity` is as severe as `threshold` or more (`--min-severity`)."""
    return rank(severity) >= rank(threshold)


def meets_fail_on(severity: str, fail_on: str) -> bool:
    """Whether a finding of this severity fails a `--fail-on` gate; `never` fails on nothing."""
    return fail_on != NEVER and at_least(severity, fail_on)


def most_severe_first(severity: str) -> int:
    """A sort key that puts errors first, then warnings, then info."""
    return -rank(severity)


def worst(severities: Iterable[str]) -> Severity:
    """The most severe of a non-empty collection."""
    return Severity(max(severities, key=rank))


def counts(severities: Iterable[str]) -> dict[str, int]:
    """How many of each, keyed "error", "warning", "info" in that order."""
    seen = [Severity(s) for s in severities]
    return {level.value: seen.count(level) for level in Severity}
