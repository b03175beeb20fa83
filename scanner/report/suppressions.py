"""What a report's config suppressed, and what it was refused, grouped the way the views show it: one line per rule
and entry, with a count (a config line `ignore = ["S2:*"]` over 40 tools reads as one line, not 40)."""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass

from scanner.report.model import Report
from scanner.rules.registry import lookup


@dataclass(frozen=True)
class SuppressionLine:
    rule_id: str
    rule_name: str
    entry: str
    count: int
    reason: str = ""  # for a refused suppression: why it was refused


def _name(rule_id: str) -> str:
    rule = lookup(rule_id)
    return rule.name if rule is not None else ""


def suppressed_lines(report: Report) -> list[SuppressionLine]:
    """One line per (rule, entry) the config suppressed findings with, in first-seen order."""
    seen = Counter((f.rule_id, f.rule_name, f.suppression.entry) for f in report.suppressed)
    return [SuppressionLine(rule_id, name, entry, count) for (rule_id, name, entry), count in seen.items()]


def refused_lines(report: Report) -> list[SuppressionLine]:
    """One line per (rule, entry) the config tried to suppress and may not, in first-seen order."""
    refused = report.config.refused if report.config else []
    seen = Counter((r.rule_id, r.entry, r.reason) for r in refused)
    return [SuppressionLine(rule_id, _name(rule_id), entry, count, reason)
            for (rule_id, entry, reason), count in seen.items()]


def config_label(report: Report) -> str:
    """The config file in use as a reader sees it: its path (and table), and how it was found."""
    config = report.config
    if config is None:
        return ""
    table = f" [{config.table}]" if config.table else ""
    how = "given with --config" if config.explicit else "discovered in the working directory"
    return f"{config.path}{table} ({how}; sha256 {config.sha256[:12]})"


def plural(count: int, noun: str) -> str:
    return f"{count} {noun}" if count == 1 else f"{count} {noun}s"
