"""A rule is data: id, kebab-case name, default severity, category, a one-line why, a fix hint, and docs. Static (S),
probe (P), behaviour (B) and provenance (I) rules all use this one type; `scanner.rule_catalog` indexes them all."""

from __future__ import annotations

from dataclasses import dataclass

from scanner.report.model import Category, Finding, Severity


@dataclass(frozen=True)
class Rule:
    id: str
    name: str
    severity: Severity  # the default; some rules grade a finding by size
    category: Category
    why: str
    fix: str
    docs: str = ""

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
