"""One catalogue for every rule the scanner reports: static, probe, behaviour and provenance."""

from __future__ import annotations

import re

from scanner.report.sarif import to_sarif
from scanner.report.model import Report, TargetInfo
from scanner.rules.model import Family
from scanner.rules.registry import ALL_RULES, lookup


def test_ids_and_names_are_unique_and_every_rule_says_why_and_how_to_fix():
    ids = [r.id for r in ALL_RULES]
    names = [r.name for r in ALL_RULES]
    assert len(set(ids)) == len(ids) and len(set(names)) == len(names)
    assert {r.family for r in ALL_RULES} == set(Family) == {"S", "P", "B", "I", "FX", "W", "V"}
    for rule in ALL_RULES:
        assert re.fullmatch(r"[a-z0-9]+(-[a-z0-9]+)*", rule.name), rule.name
        assert rule.why and rule.fix, rule.id


def test_lookup_by_id_or_name_across_families():
    assert lookup("p3").id == "P3" and lookup("egress-attempt").id == "B2" and lookup(" I7 ").id == "I7"
    assert lookup("S99") is None


def test_sarif_catalogue_describes_probe_and_behaviour_findings_in_full():
    finding = lookup("B2").finding("fetch", "A network attempt to x.invalid.")
    sarif = to_sarif(Report(target=TargetInfo(kind="file", name="t", requested="t"), findings=[finding]))
    rules = {r["id"]: r for r in sarif["runs"][0]["tool"]["driver"]["rules"]}
    assert rules["B2"]["help"]["text"].startswith(lookup("B2").why)
    assert sarif["runs"][0]["results"][0]["ruleId"] == "B2"
