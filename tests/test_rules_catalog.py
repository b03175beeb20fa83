"""The rule catalogue: every rule documented, named, wired to a check, and findable by id or name."""

from __future__ import annotations

import re

from scanner.rules.model import Family
from scanner.rules.registry import lookup, rules_of
from scanner.rules.static.engine import CHECKS

RULES = rules_of(Family.STATIC)


def test_every_rule_has_metadata_and_a_check() -> None:
    assert [r.id for r in RULES] == [f"S{i}" for i in range(1, 15)]
    assert set(CHECKS) == {r.id for r in RULES}
    for rule in RULES:
        assert re.fullmatch(r"[a-z]+(-[a-z]+)*", rule.name), rule.name
        assert rule.why and rule.fix and len(rule.docs) > 40


def test_lookup_by_id_and_name() -> None:
    assert lookup("s7") is lookup("S7") is lookup("unbounded-list")
    assert lookup("S99") is None


def test_docs_table_lists_every_rule() -> None:
    from pathlib import Path

    docs = (Path(__file__).resolve().parent.parent / "docs" / "rules.md").read_text(encoding="utf-8")
    for rule in RULES:
        assert f"| {rule.id} | `{rule.name}` |" in docs, rule.id
