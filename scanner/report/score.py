"""The agent-friendliness score (what the definitions cost an agent in tokens) and the security verdict. Every
scoring constant lives here.

Tokens are estimated at 4 characters of compact JSON per token. A tool's waste is its definition overhead above
300 tokens (paid every session) plus an estimated waste per quality finding; its score halves per 5,000 wasted
tokens. The server's score halves per 10,000 wasted tokens over all tools and server-level findings. Security
findings never change the score: they decide the verdict. A scan that did not complete has the verdict
`incomplete` unless a security error was found before it stopped (a finding is a finding: that stays `block`).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from scanner.report.model import Finding, Score, Status, ToolScore, Verdict
from scanner.report.severity import Severity, counts
from scanner.tokens import TOKEN_ESTIMATE, json_tokens

FREE_TOKENS_PER_TOOL = 300
TOOL_HALF_LIFE_TOKENS = 5_000
SERVER_HALF_LIFE_TOKENS = 10_000
TOKENS_WARNING = 10_000
TOKENS_ERROR = 25_000

# Estimated tokens an agent wastes per finding (wrong calls, retries, extra reads), by rule and severity.
WASTE_NO_DESCRIPTION = 2_000
WASTE_UNBOUNDED_LIST = 2_000
WASTE_SHORT_DESCRIPTION = 500
WASTE_OVERLAP = 500
WASTE_VAGUE_PARAMETER = 300
WASTE_UNTYPED_PARAMETER = 300
WASTE_UNDESCRIBED_PARAMETER = 100
WASTE_DUPLICATE_NAME = 1_000
WASTE_LOOSE_SCHEMA = 300
WASTE_PROMPT = 200
WASTE_NAMING = 100
WASTE_ANNOTATION = 50

_WASTE: dict[tuple[str, str], int] = {
    ("S1", "error"): WASTE_NO_DESCRIPTION,
    ("S1", "warning"): WASTE_SHORT_DESCRIPTION,
    ("S2", "warning"): WASTE_VAGUE_PARAMETER,
    ("S3", "error"): WASTE_UNTYPED_PARAMETER,
    ("S3", "warning"): WASTE_UNTYPED_PARAMETER,
    ("S3", "info"): WASTE_UNDESCRIBED_PARAMETER,
    ("S4", "warning"): WASTE_OVERLAP,
    ("S5", "error"): WASTE_NAMING,
    ("S5", "warning"): WASTE_NAMING,
    ("S7", "warning"): WASTE_UNBOUNDED_LIST,
    ("S9", "error"): WASTE_DUPLICATE_NAME,
    ("S10", "warning"): WASTE_LOOSE_SCHEMA,
    ("S13", "info"): WASTE_ANNOTATION,
    ("S13", "warning"): WASTE_ANNOTATION,
    ("S14", "error"): WASTE_PROMPT,
    ("S14", "warning"): WASTE_PROMPT,
    ("S14", "info"): WASTE_PROMPT // 2,
}


def waste_of(finding: Finding) -> int:
    """Estimated tokens wasted per session because of this finding; 0 for security findings."""
    if finding.category == "security":
        return 0
    return _WASTE.get((finding.rule_id, finding.severity), 0)


def estimate_tokens(value: Any) -> int:
    """Estimated tokens of a JSON value (compact JSON, 4 characters per token: scanner/tokens.py)."""
    return json_tokens(value)


def halving_score(wasted: int, half_life: int) -> int:
    """100 with no waste, halving per half_life wasted tokens, rounded to an integer 0-100."""
    return max(0, min(100, round(100 * 0.5 ** (wasted / half_life))))


def tool_name(index: int, raw: Any) -> str:
    """The name findings use for a tool (a placeholder when it has no string name)."""
    name = raw.get("name") if isinstance(raw, dict) else None
    return name if isinstance(name, str) and name else f"<tool #{index}>"


def verdict_of(findings: list[Finding], status: Status = "complete") -> Verdict:
    """block on any security error; incomplete for a scan that did not complete; review on any security warning;
    else pass."""
    security = [f.severity for f in findings if f.category == "security"]
    if Severity.ERROR in security:
        return "block"
    if status != "complete":
        return "incomplete"
    if Severity.WARNING in security:
        return "review"
    return "pass"


def security_share(findings: list[Finding]) -> str | None:
    """What of the counted errors and warnings the verdict weighs (security findings only), said when some are not
    security: `PASS  1 error` alone reads as a contradiction. None when every error and warning is security."""
    if not any(f.category != "security" and f.severity in ("error", "warning") for f in findings):
        return None
    seen = counts(f.severity for f in findings if f.category == "security")
    if not seen["error"] and not seen["warning"]:
        return "none of them security findings, which alone make the verdict"
    return "security: " + ", ".join(f"{seen[level]} {level}" + ("" if seen[level] == 1 else "s")
                                    for level in ("error", "warning"))


def compute(findings: list[Finding], tools: list[Any], measured_waste: Mapping[str, int] | None = None,
            status: Status = "complete", tool_tokens: Sequence[int | None] | None = None) -> tuple[Score, Verdict]:
    """Score the tools (raw tools/list entries) given all findings, and the verdict of the whole scan.

    measured_waste: tokens per tool that probes measured being wasted (P1-P5 on real responses), added to the
    fixed estimates per finding. tool_tokens: estimate_tokens of each tool when the caller already has it (the
    rules' context measured every definition; None for one to count here)."""
    known = [None] * len(tools) if tool_tokens is None else tool_tokens
    if len(known) != len(tools):
        raise ValueError(f"tool_tokens has {len(known)} counts for {len(tools)} tools")
    waste_by_tool: dict[str, int] = dict(measured_waste or {})
    server_waste = 0
    for finding in findings:
        if finding.tool is None:
            server_waste += waste_of(finding)
        else:
            waste_by_tool[finding.tool] = waste_by_tool.get(finding.tool, 0) + waste_of(finding)
    tool_scores: list[ToolScore] = []
    seen: set[str] = set()
    total_tokens = 0
    total_waste = server_waste
    for index, raw in enumerate(tools):
        name = tool_name(index, raw)
        counted = known[index]
        tokens = estimate_tokens(raw) if counted is None else counted
        total_tokens += tokens
        wasted = max(0, tokens - FREE_TOKENS_PER_TOOL)
        if name not in seen:  # a duplicated name's findings are counted once
            wasted += waste_by_tool.get(name, 0)
            seen.add(name)
        total_waste += wasted
        tool_scores.append(ToolScore(tool=name, score=halving_score(wasted, TOOL_HALF_LIFE_TOKENS), tokens=tokens,
                                     wasted_tokens=wasted))
    score = Score(value=halving_score(total_waste, SERVER_HALF_LIFE_TOKENS), tokens=total_tokens,
                  wasted_tokens=total_waste, estimate=TOKEN_ESTIMATE, tools=tool_scores)
    return score, verdict_of(findings, status)
