"""A rule is data: id, kebab-case name, default severity, category, a one-line why, a fix hint, docs (what it does),
an example and a reference link. Every family (static S, probe P, behaviour B, provenance I, fixture FX, wire W, and what
comes next) uses this one type; `scanner.rules.registry` holds them all."""

from __future__ import annotations

import re
from dataclasses import dataclass
from enum import StrEnum

from scanner.report.model import Category, Finding
from scanner.report.severity import Severity

_FAMILY_PREFIX = re.compile(r"[A-Z]+")


class Family(StrEnum):
    """Where a rule's evidence comes from; the value is the prefix of its ids."""

    STATIC = "S"
    PROBE = "P"
    BEHAVIOR = "B"
    PROVENANCE = "I"
    FIXTURE = "FX"
    WIRE = "W"
    SOURCE = "V"


FAMILY_LABELS: dict[Family, str] = {
    Family.STATIC: "static: the tool definitions",
    Family.PROBE: "probe: the recorded calls",
    Family.BEHAVIOR: "behaviour: what a call did in the sandbox",
    Family.PROVENANCE: "provenance: the package and its install",
    Family.FIXTURE: "fixture: the user's fixture probes",
    Family.WIRE: "wire: protocol-revision conformance of the live session",
    Family.SOURCE: "source: the installed package's own files, vetted for the next revision",
}


def family_of(rule_id: str) -> Family:
    """The family an id belongs to, by its letter prefix (ValueError for an id of no known family)."""
    prefix = _FAMILY_PREFIX.match(rule_id)
    return Family(prefix.group(0) if prefix else rule_id)


@dataclass(frozen=True)
class Rule:
    id: str
    name: str
    severity: Severity  # the default; some rules grade a finding by size
    category: Category
    why: str
    fix: str
    docs: str = ""  # what it does: when the rule fires, at which severity
    example: str = ""
    reference: str = ""

    @property
    def family(self) -> Family:
        return family_of(self.id)

    def finding(
        self,
        tool: str | None,
        message: str,
        *,
        evidence: str | None = None,
        severity: Severity | None = None,
        category: Category | None = None,
        fix: str | None = None,
    ) -> Finding:
        """A finding of this rule; severity, category and fix default to the rule's own."""
        return Finding(
            rule_id=self.id,
            rule_name=self.name,
            severity=severity or self.severity,
            category=category or self.category,
            tool=tool,
            message=message,
            fix=self.fix if fix is None else fix,
            evidence=evidence,
        )
