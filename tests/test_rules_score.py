"""Score and verdict."""

from __future__ import annotations

from scanner.report.model import Finding
from scanner.report.score import (FREE_TOKENS_PER_TOOL, WASTE_NO_DESCRIPTION, compute, halving_score, verdict_of, waste_of)


def f(rule: str, severity: str, category: str, tool: str | None = "t") -> Finding:
    return Finding(rule_id=rule, rule_name="x", severity=severity, category=category, tool=tool,  # type: ignore[arg-type]
                   message="m")


def test_verdict() -> None:
    assert verdict_of([]) == "pass"
    assert verdict_of([f("S1", "error", "ergonomics")]) == "pass"
    assert verdict_of([f("S11", "warning", "security")]) == "review"
    assert verdict_of([f("S11", "warning", "security"), f("P1", "error", "security")]) == "block"
    assert verdict_of([f("S12", "info", "security")]) == "pass"


def test_halving() -> None:
    assert halving_score(0, 5000) == 100
    assert halving_score(5000, 5000) == 50
    assert halving_score(10000, 5000) == 25


def test_security_findings_do_not_cost_score() -> None:
    assert waste_of(f("S8", "error", "security")) == 0
    assert waste_of(f("S1", "error", "ergonomics")) == WASTE_NO_DESCRIPTION


def test_compute_tool_and_server_scores() -> None:
    small = {"name": "t", "description": "d"}
    big = {"name": "big", "description": "x" * 4 * (FREE_TOKENS_PER_TOOL + 5000)}
    score, verdict = compute([f("S1", "error", "ergonomics")] * 2 + [f("S13", "warning", "metadata", None)],
                             [small, big])
    by_tool = {t.tool: t for t in score.tools}
    assert by_tool["t"].wasted_tokens == 2 * WASTE_NO_DESCRIPTION and by_tool["t"].score == 57
    assert by_tool["big"].score in (49, 50)
    assert score.wasted_tokens == by_tool["t"].wasted_tokens + by_tool["big"].wasted_tokens + 50
    assert score.tokens == by_tool["t"].tokens + by_tool["big"].tokens
    assert verdict == "pass"
