"""The provenance section of the report and how failed checks become findings."""

from __future__ import annotations

from scanner.provenance.model import Check, PackageProvenance, ProvenanceReport
from scanner.rules.model import Family
from scanner.rules.provenance import check_findings
from scanner.rules.registry import rules_of
from scanner.report.model import Report, TargetInfo


def test_report_carries_the_provenance_section_and_round_trips() -> None:
    pkg = PackageProvenance(ecosystem="npm", name="x-server", version="1.0.0", checks=[
        Check(name="integrity", outcome="verified", evidence="ok", rule_id="I2"),
        Check(name="registry-signature", outcome="unavailable", evidence="stripped", rule_id="I3"),
        Check(name="attestation", outcome="failed", evidence="subject digest differs", rule_id="I4"),
    ])
    report = Report(target=TargetInfo(kind="npm", name="x-server", requested="npm:x-server@1.0.0"),
                    provenance=ProvenanceReport(packages=[pkg]))
    again = Report.model_validate_json(report.model_dump_json())
    assert again.provenance == report.provenance
    assert [(n, c.name) for n, c in again.provenance.unchecked()] == [("x-server", "registry-signature")]
    found = check_findings(pkg)
    assert [(f.rule_id, f.severity) for f in found] == [("I4", "error")]
    assert "npm:x-server@1.0.0" in found[0].message


def test_every_rule_has_id_why_and_fix() -> None:
    rules = rules_of(Family.PROVENANCE)
    assert sorted((r.id for r in rules), key=lambda r: int(r[1:])) == [f"I{i}" for i in range(1, 14)]
    for rule in rules:
        assert rule.why and rule.fix and rule.category in ("security", "metadata")


def test_egress_outside_the_allowlist_is_I7() -> None:
    from scanner.provenance.model import EgressAttempt
    from scanner.rules.provenance import egress_finding
    bad = egress_finding(EgressAttempt(host="collect.example.invalid", allowed=False, package="demo@1.0.0",
                                       script="postinstall"))
    assert bad is not None and (bad.rule_id, bad.severity) == ("I7", "error")
    assert bad.message == "install script postinstall of demo@1.0.0 tried to reach collect.example.invalid (refused)"
    assert egress_finding(EgressAttempt(host="registry.npmjs.org", allowed=True)) is None


def test_I7_names_the_step_that_tried() -> None:
    from scanner.provenance.model import EgressAttempt
    from scanner.rules.provenance import egress_finding

    def message(**kwargs: str) -> str:
        found = egress_finding(EgressAttempt(host="x.example.invalid:443", allowed=False, **kwargs))
        assert found is not None
        return found.message

    assert message(package="a@1", script="preinstall, postinstall").startswith(
        "install scripts preinstall, postinstall of a@1 tried")
    assert message(package="docopt@0.6.2", script="build backend").startswith("build backend of docopt@0.6.2 tried")
    assert message(script="npm install --ignore-scripts (fetching the tree; no install script runs)").startswith(
        "npm install --ignore-scripts (fetching the tree; no install script runs) tried to reach x.example.invalid:443")
    assert message(package="b@2").startswith("the install of b@2 tried")
    assert message().startswith("an install step tried")
