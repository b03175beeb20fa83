"""`check` over large generated tool lists gives the same findings, score and verdict as the code before the speed
work (issue 12): the digests below were recorded from commit 1c3f56c (tests/large_tool_lists.py's lists), and
re-recorded when S4 stopped pairing tools whose names act on different objects (svc_run_project_117 and
svc_run_team_57: two or four S4 warnings fewer, every other finding the same)."""

from __future__ import annotations

import hashlib
import json
from typing import Any

import pytest

from scanner.report.score import compute
from scanner.rules.static.engine import run_rules
from tests.large_tool_lists import generate_tools

RECORDED = {
    300: "4fc079625674b05f4956663574d4333ab29692d813f7b9a997420385417cedc9",
    1000: "ae41ada0777731e2f55c556136750c4d3e48577dab8b8281a0a6d0bdc7178f0c",
    3000: "b19a091c72aed1e1467bf85c3e8e32525dad0f2a65b0f3c3afce9a4467d740d5",
}


def digest(tools: list[Any]) -> str:
    findings = run_rules(tools)
    score, verdict = compute(findings, tools, status="complete")
    blob = json.dumps({"findings": [f.model_dump(mode="json") for f in findings], "score": score.model_dump(mode="json"),
                       "verdict": verdict}, sort_keys=True, default=str)
    return hashlib.sha256(blob.encode()).hexdigest()


@pytest.mark.parametrize("count", sorted(RECORDED))
def test_findings_of_a_large_list_are_those_of_the_old_code(count: int) -> None:
    assert digest(generate_tools(count)) == RECORDED[count]
