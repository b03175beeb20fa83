"""One of S8's detectors: a regular expression and what a match of it is (kind, severity, message), searched only in
text that holds the literal words it cannot match without, and compiled on the first such search: clean text costs a
few substring tests, and a command whose text holds none of a pattern's words never compiles it (~1 ms each)."""

from __future__ import annotations

import re
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from functools import cached_property

from scanner.report.severity import Severity
from scanner.rules.static.literals import could_match
from scanner.rules.static.stored_literals import Needs, load_table, needs_of

STORED_NEEDS = load_table()


@dataclass(frozen=True)
class Detector:
    kind: str
    source: str  # the regular expression, compiled without flags
    severity: Severity
    message: str
    on_normalised: bool
    instruction: bool  # counts as an instruction that makes exfiltration-shaped parameters suspicious
    keep: Callable[[str, re.Match[str]], bool] | None = None  # which of the pattern's matches are this detector's

    @cached_property
    def pattern(self) -> re.Pattern[str]:
        return re.compile(self.source)

    @cached_property
    def needs(self) -> Needs:
        """Literal text the pattern cannot match without (checked with `in` before a search), as stored beside the
        rule (scanner/rules/static/stored_literals.py)."""
        return needs_of(self.source, STORED_NEEDS)

    def search(self, subject: str) -> Iterator[re.Match[str]]:
        matches = self.pattern.finditer(subject) if could_match(self.needs, subject) else iter(())
        return matches if self.keep is None else (match for match in matches if self.keep(subject, match))
