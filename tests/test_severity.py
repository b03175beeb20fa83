"""One severity vocabulary: an ordered str enum that gates, views and sorting read; the report JSON stays strings."""

from __future__ import annotations

import json
import re
from pathlib import Path

from scanner.lock.changes import at_or_above, change, counts as change_counts
from scanner.report.markdown import to_markdown
from scanner.report.model import Finding, Report, TargetInfo
from scanner.report.severity import (FAIL_ON_LEVELS, Severity, at_least, counts, meets_fail_on, most_severe_first,
                                     worst)
from scanner.tokens import json_tokens, text_tokens, tokens_for_chars
from scanner.vocabulary import name_tokens, name_words

SCANNER = Path(__file__).resolve().parent.parent / "scanner"


def _finding(severity: str, rule_id: str = "S1") -> Finding:
    return Finding(rule_id=rule_id, rule_name="r", severity=severity, category="ergonomics", message="m")  # type: ignore[arg-type]


def test_order_and_gates() -> None:
    assert [s.rank for s in (Severity.INFO, Severity.WARNING, Severity.ERROR)] == [0, 1, 2]
    assert at_least("error", "warning") and at_least("warning", "warning") and not at_least("info", "warning")
    assert meets_fail_on("info", "info") and not meets_fail_on("error", "never") and not meets_fail_on("warning", "error")
    assert sorted(["info", "error", "warning"], key=most_severe_first) == ["error", "warning", "info"]
    assert worst(["info", "warning", "info"]) is Severity.WARNING
    assert counts(["info", "error", "info"]) == {"error": 1, "warning": 0, "info": 2}
    assert FAIL_ON_LEVELS == ("info", "warning", "error", "never")


def test_findings_and_changes_serialise_as_plain_strings() -> None:
    finding = _finding("warning")
    assert finding.severity is Severity.WARNING and f"{finding.severity:<8}|" == "warning |"
    assert json.loads(finding.model_dump_json())["severity"] == "warning"
    assert json.dumps(finding.model_dump()) == json.dumps(json.loads(finding.model_dump_json()))
    changes = [change("tool_removed", "gone"), change("duplicate_tool", "twice"),
               change("output_schema_changed", "new")]
    assert [c.severity for c in at_or_above(changes, "warning")] == ["error", "warning"]
    assert at_or_above(changes, "never") == [] and change_counts(changes) == {"error": 1, "warning": 1, "info": 1}


def test_views_sort_most_severe_first() -> None:
    report = Report(target=TargetInfo(kind="file", name="t", requested="t"),
                    findings=[_finding("info", "S3"), _finding("error", "S9"), _finding("warning", "S5")])
    text = to_markdown(report)
    assert text.index("S9") < text.index("S5") < text.index("S3")


def test_no_other_module_keeps_its_own_severity_ordering() -> None:
    ordering = re.compile(r"""["'](?:info|error)["']\s*:\s*[0-2]\b""")
    offenders = [str(path.relative_to(SCANNER)) for path in SCANNER.rglob("*.py")
                 if ordering.search(path.read_text(encoding="utf-8"))]
    assert offenders == []


def test_one_tokens_estimate() -> None:
    assert [tokens_for_chars(n) for n in (0, 1, 4, 5)] == [0, 1, 1, 2]
    assert text_tokens("abcde") == 2 and json_tokens({"a": 1}) == 2  # {"a":1} is 7 characters


def test_one_tokenizer_two_splits_of_acronyms() -> None:
    assert name_words("get_userName-v2.x") == name_tokens("get_userName-v2.x") == ["get", "user", "name", "v2", "x"]
    assert name_words("HTTPServer") == ["httpserver"] and name_tokens("HTTPServer") == ["http", "server"]
    assert name_words("fileURLs") == ["file", "urls"] and name_tokens("listPRs") == ["list", "p", "rs"]
