"""A rule's documentation as text, in ruff's shape: what it does, why is this bad, an example, the fix."""

from __future__ import annotations

from typing import Any

from scanner.rules.model import FAMILY_LABELS, Rule


def explain(rule: Rule) -> str:
    """The docs of one rule as plain text (`check --explain`)."""
    sections = [("What it does", rule.docs), ("Why is this bad?", rule.why), ("Example", rule.example),
                ("Fix", rule.fix), ("Reference", rule.reference)]
    body = "".join(f"\n## {title}\n{text}\n" for title, text in sections if text)
    return (f"{rule.id} {rule.name}  (default severity: {rule.severity}, category: {rule.category}, "
            f"family: {FAMILY_LABELS[rule.family]})\n{body}")


def as_json(rule: Rule) -> dict[str, Any]:
    """One rule as a JSON object (`mcp-sandbox rules --json`)."""
    return {"id": rule.id, "name": rule.name, "severity": rule.severity.value, "family": rule.family.value,
            "category": rule.category, "why": rule.why, "fix": rule.fix, "docs": rule.docs, "example": rule.example,
            "reference": rule.reference or None}


def markdown_table(rules: list[Rule]) -> str:
    """The rules as a Markdown table (`mcp-sandbox rules --markdown`; the README's rules table is this output)."""
    rows = ["| id | name | default severity | category | why |", "| --- | --- | --- | --- | --- |"]
    rows += [f"| {r.id} | `{r.name}` | {r.severity.value} | {r.category} | {r.why.replace('|', chr(92) + '|')} |"
             for r in rules]
    return "\n".join(rows) + "\n"
