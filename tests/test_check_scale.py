"""`check` over large generated tool lists gives the same findings, score and verdict as the code before the speed
work (issue 12): the digests below were recorded from commit 1c3f56c (tests/large_tool_lists.py's lists)."""

from __future__ import annotations

import hashlib
import json
from typing import Any

import pytest

from scanner.report.score import compute
from scanner.rules.static.engine import run_rules
from tests.large_tool_lists import generate_tools

RECORDED = {
    300: "bae855c4ae1b7c4ca21ca57f129b33cc69330a1978f449c305194884fb472d31",
    1000: "81fc9e2a4dba277ccdb54dbba454ccdb252cdb211f0a0213d595384d4cbe661d",
    3000: "ebf4135d7de27464217802499d3e607e110e35adf925f52af5acf43f12373d7e",
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
