"""One registry of rules for every family: each rule listed once, every id the code reports registered, one lookup,
and config disable/ignore that reach every family's findings."""

from __future__ import annotations

import ast
import re
import tomllib
from pathlib import Path

import pytest

from scanner.config import Config, parse
from scanner.errors import UsageError
from scanner.probes.model import ProbeCall, ProbeResult, result_from_call
from scanner.rules.behavior import egress_findings
from scanner.rules.docs import explain
from scanner.rules.fixture import refusal_finding
from scanner.rules.model import Family
from scanner.rules.probe import check_no_paging_hint
from scanner.rules.provenance import finding as provenance_finding
from scanner.rules.registry import ALL_RULES, CatalogueError, load_rules, lookup, rule, rules_of

SCANNER = Path(__file__).resolve().parent.parent / "scanner"
RULE_ID = re.compile(r"(?:S|P|B|I|W|V)\d+|FX")
PRODUCERS = {"rule", "finding", "_finding", "Check"}  # the calls that turn a rule id into a finding (Check: W)


def _ids_in_code() -> dict[str, set[str]]:
    """Every rule id the scanner's code names where it makes a finding or a provenance check, by file."""
    found: dict[str, set[str]] = {}
    for path in SCANNER.rglob("*.py"):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            values: list[ast.expr] = []
            if isinstance(node, ast.Call):
                name = node.func.attr if isinstance(node.func, ast.Attribute) else getattr(node.func, "id", "")
                if name in PRODUCERS and node.args:
                    values.append(node.args[0])
                values += [k.value for k in node.keywords if k.arg == "rule_id"]
            for value in values:
                if isinstance(value, ast.Constant) and isinstance(value.value, str) and RULE_ID.fullmatch(value.value):
                    found.setdefault(value.value, set()).add(str(path.relative_to(SCANNER)))
    return found


def test_every_rule_id_the_code_reports_is_registered_and_every_registered_rule_is_reported() -> None:
    in_code = _ids_in_code()
    registered = {r.id for r in ALL_RULES}
    assert set(in_code) - registered == set(), "ids used in code but missing from scanner/rules/rules.toml"
    assert registered - set(in_code) == set(), "rules in the registry that no code produces"
    assert len(in_code) > 35  # the walk really found the producers (S1-S14, P1-P9, B1-B6, I1-I11, FX)


def test_every_family_is_registered_with_unique_ids_and_names_and_full_docs() -> None:
    assert {family: len(rules_of(family)) for family in Family} == {
        Family.STATIC: 14, Family.PROBE: 11, Family.BEHAVIOR: 7, Family.PROVENANCE: 13, Family.FIXTURE: 1,
        Family.WIRE: 17, Family.SOURCE: 1}
    assert len({r.id for r in ALL_RULES}) == len({r.name for r in ALL_RULES}) == len(ALL_RULES) == 64
    for entry in ALL_RULES:
        assert entry.docs and entry.example and entry.why and entry.fix, entry.id
        assert not entry.reference or entry.reference.startswith("https://"), entry.id


def test_one_lookup_by_id_or_name_for_every_family() -> None:
    assert lookup("s7") is lookup("unbounded-list") is rule("S7")
    assert lookup("P3") is lookup("no-paging-hint") and lookup(" b2 ").id == "B2" and lookup("install-egress").id == "I7"
    assert lookup("fx").name == "fixture-refused"
    assert lookup("S99") is None and lookup("") is None
    with pytest.raises(KeyError):
        rule("s7")  # code asks by exact id; only users get the forgiving lookup
    assert not (SCANNER / "rules" / "static" / "catalog.py").exists()


@pytest.mark.parametrize("text,needle", [
    ('[[rule]]\nid="S1"\nname="a"\nseverity="warning"\ncategory="metadata"\nwhy="w"\nfix="f"\ndocs="d"\n'
     '[[rule]]\nid="S1"\nname="b"\nseverity="warning"\ncategory="metadata"\nwhy="w"\nfix="f"\ndocs="d"\n',
     "listed more than once: S1"),
    ('[[rule]]\nid="S1"\nname="a"\nseverity="loud"\ncategory="metadata"\nwhy="w"\nfix="f"\ndocs="d"\n', "loud"),
    ('[[rule]]\nid="Z1"\nname="a"\nseverity="info"\ncategory="metadata"\nwhy="w"\nfix="f"\ndocs="d"\n', "Z1"),
    ('[[rule]]\nid="S1"\nname="Not Kebab"\nseverity="info"\ncategory="metadata"\nwhy="w"\nfix="f"\ndocs="d"\n',
     "bad name"),
    ('[[rule]]\nid="S1"\nname="a"\nseverity="info"\ncategory="metadata"\nwhy="w"\nfix="f"\n', "missing"),
])
def test_a_malformed_catalogue_is_refused(text: str, needle: str) -> None:
    with pytest.raises((CatalogueError, ValueError), match=needle):
        load_rules(tomllib.loads(text))


@pytest.mark.parametrize("rule_id", ["S7", "P3", "B2", "I7", "FX"])
def test_explain_is_in_four_parts(rule_id: str) -> None:
    text = explain(rule(rule_id))
    assert text.startswith(f"{rule_id} {rule(rule_id).name}  (default severity: ")
    positions = [text.index(f"## {part}\n") for part in ("What it does", "Why is this bad?", "Example", "Fix")]
    assert positions == sorted(positions)
    assert rule(rule_id).docs in text and rule(rule_id).fix in text


# ---- config disable / ignore for every family --------------------------------------------------------------------

def _large_unpaged_response() -> list[ProbeResult]:
    text = "row of data without any hint about what comes next\n" * 500  # ~6,500 tokens
    return [result_from_call(ProbeCall("list_rows", label="generated", kind="generated", arguments={}),
                             call_result={"content": [{"type": "text", "text": text}]}, latency_ms=10)]


def test_disable_p3_is_accepted_and_drops_p3_findings() -> None:
    config = parse({"disable": ["P3"]}, "mcp-sandbox.toml")
    assert config.disabled == {"P3"}
    p3 = [item.finding for item in check_no_paging_hint({"name": "list_rows"}, _large_unpaged_response())]
    assert [f.rule_id for f in p3] == ["P3"]  # the rule fires without the config …
    others = [rule("S7").finding("list_rows", "no limit"), *egress_findings([{"host": "x.invalid"}], during="now")]
    assert config.apply([*p3, *others]) == others  # … and the config drops it, keeping the rest in order
    assert Config().apply([*p3, *others]) == [*p3, *others]


def test_disable_and_ignore_take_ids_and_names_of_every_family() -> None:
    entries = {"disable": ["egress-attempt", "I7", "fx"], "ignore": ["P3:list_rows", "known-advisory:*"]}
    config = parse(entries, "c", explicit=True)
    assert config.disabled == {"B2", "I7", "FX"} and config.ignored == {("P3", "list_rows"), ("I10", "*")}
    kept = rule("P3").finding("other_tool", "large")
    egress = [*egress_findings([{"host": "x.invalid"}], during="now"), provenance_finding("I7", "tried x")]
    others = [refusal_finding("t", "fixture 1", "the server has no tool named 't'"),
              rule("P3").finding("list_rows", "large"), provenance_finding("I10", "affected")]
    assert config.apply([*egress, *others, kept]) == [kept]
    # The same entries from a discovered config: the error-level egress findings (B2, I7) stay, the rest go.
    assert parse(entries, "c").apply([*egress, *others, kept]) == [*egress, kept]


def test_unknown_rule_in_config_names_the_rules_command() -> None:
    with pytest.raises(UsageError, match=r"unknown rule 'P99'.*mcp-sandbox rules"):
        parse({"disable": ["P99"]}, "mcp-sandbox.toml")
