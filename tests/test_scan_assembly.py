"""The scan's stages return values and one function builds the Report from them: the findings in stage order
(provenance, install egress, static lint, probes, late egress), the errors in the order they happened, the config
applied once before the score and verdict, and what a stage that never ran leaves out. No Docker: the stage values
are made here, the way the stages make them."""

from __future__ import annotations

import dataclasses
from pathlib import Path

from sandbox.install.proxy.log import EgressAttempt as SandboxEgressAttempt
from sandbox.install.request import InstalledServer
from sandbox.run.policy import RunPolicy, read_applied
from sandbox.run.server import RunningServer
from scanner.config import Config
from scanner.pipeline.assemble import ScanParts, assemble, refused_report
from scanner.pipeline.installation import Installation, _install_egress, install_info
from scanner.pipeline.inventory import Inventory
from scanner.pipeline.lint import lint
from scanner.pipeline.listing import Listing
from scanner.pipeline.provenance_check import Provenance
from scanner.pipeline.refusal import known_bad_refusal
from scanner.pipeline.served import served_definitions
from scanner.pipeline.server_start import StartedServer
from scanner.pipeline.targets import parse_target
from scanner.pipeline.transport import WireHealth
from scanner.probes.phase import ProbePhaseReport, ProbePhaseResult, ProbePlan
from scanner.probes.runner import ProbeOptions
from scanner.provenance.model import ProvenanceReport
from scanner.report.model import Finding, TeardownInfo
from scanner.rules.provenance import egress_finding
from tests.test_report_applied_policy import INSPECT

TOOLS = [{"name": "get_weather", "description": "x" * 20_000, "inputSchema": {"type": "object"}}]


def _finding(rule_id: str, tool: str | None = None, severity: str = "warning") -> Finding:
    return Finding(rule_id=rule_id, rule_name=rule_id.lower(), severity=severity, category="security", tool=tool,
                   message=f"{rule_id} found")


def _installation() -> Installation:
    installed = InstalledServer(
        image="img:1", image_id="sha256:1", runtime_image="rt:1", cached=False, name="demo", version="1.2.3",
        entry_points={"demo": "/usr/bin/demo"}, installer_output="ok", seconds=4.5, manifest={},
        egress=[SandboxEgressAttempt(host="registry.npmjs.org", port=443, allowed=True, count=1),
                SandboxEgressAttempt(host="evil.example.invalid", port=443, allowed=False, count=1,
                                     package="dep@2", script="postinstall")])
    egress = [_install_egress(attempt, "demo@1.2.3") for attempt in installed.egress]
    return Installation(installed=installed, egress=egress,
                        egress_findings=[f for f in map(egress_finding, egress) if f is not None])


def _parts(inventory: Inventory, health: WireHealth | None = None, exit_code: int | None = 0) -> ScanParts:
    health = health or WireHealth()
    parts = ScanParts(target=parse_target("npm:demo"), session="s1")
    parts.installation = _installation()
    parts.provenance = Provenance(report=ProvenanceReport(), findings=[_finding("I5")])
    parts.install = install_info(parts.installation.installed, ["demo"])
    server = RunningServer(container_id="c1", socket=None, applied=read_applied(INSPECT),  # type: ignore[arg-type]
                           start_seconds=1.25, started_at=0.0)
    parts.started = StartedServer(server=server, plan=ProbePlan(options=ProbeOptions(), policy=RunPolicy()),
                                  restart=lambda: server, network="observe", drain=None)
    probed = ProbePhaseResult(options=ProbeOptions())
    parts.listing = Listing(inventory=inventory, health=health, probed=probed, stderr="boot\n",
                            stderr_truncated=False, exit_code=exit_code)
    parts.served = served_definitions(inventory, health, exit_code)
    parts.lint = lint(inventory)
    parts.probes = ProbePhaseReport(findings=[_finding("B2", "get_weather", "error")], errors=["probing: one"],
                                    measured_waste={"get_weather": 10})
    parts.late_egress = [_finding("B2", None, "error")]
    parts.teardown = TeardownInfo(complete=True, seconds=0.5, removed=["c1"])
    parts.total_seconds = 9.0
    return parts


def _served_inventory() -> Inventory:
    return Inventory(server={"name": "demo", "version": "1", "protocol_version": "2025-06-18", "capabilities": {}},
                     tools=TOOLS, first_tools_list_seconds=2.0, connected=True)


def test_findings_come_in_stage_order_and_every_section_is_filled() -> None:
    parts = _parts(_served_inventory())
    report = assemble(parts, Config())
    rules = [f.rule_id for f in report.findings]
    lint_rules = [f.rule_id for f in parts.lint]
    assert lint_rules  # the long description is linted (the uncapped definition, not the report's copy)
    assert rules == ["I5", "I7", *lint_rules, "B2", "B2"]
    assert report.target.version == "1.2.3" and report.install is not None and report.install.command == ["demo"]
    assert report.sandbox is not None and report.sandbox.session == "s1" and report.sandbox.network == "observe"
    assert report.sandbox.applied == parts.started.server.applied and report.sandbox.stderr == "boot\n"
    assert report.sandbox.exit_code == 0 and report.sandbox.teardown == parts.teardown
    assert [(t.install, t.start, t.first_tools_list, t.total) for t in [report.timings]] == [(4.5, 1.25, 2.0, 9.0)]
    assert report.provenance is not None
    assert [(e.host, e.allowed, e.package, e.script) for e in report.provenance.egress] == [
        ("registry.npmjs.org:443", True, "demo@1.2.3", None), ("evil.example.invalid:443", False, "dep@2",
                                                                 "postinstall")]
    assert parts.provenance.report.egress == []  # the stage's value is not changed by assembling
    assert len(report.tools[0]["description"]) < len(TOOLS[0]["description"])  # capped for storage
    assert report.as_served().tools == TOOLS  # uncapped for the lockfile and the score
    assert report.errors == ["probing: one"]
    assert report.verdict == "block" and report.score is not None


def test_the_config_applies_once_before_the_verdict() -> None:
    given = Config(disabled=frozenset({"B2", "I7"}), source="ci.toml", path="ci.toml", explicit=True)
    report = assemble(_parts(_served_inventory()), given)
    assert "B2" not in {f.rule_id for f in report.findings} and "I7" not in {f.rule_id for f in report.findings}
    assert {s.rule_id for s in report.suppressed} >= {"B2", "I7"} and report.verdict != "block"
    discovered = assemble(_parts(_served_inventory()), dataclasses.replace(given, explicit=False))
    assert {"B2", "I7"} <= {f.rule_id for f in discovered.findings} and discovered.verdict == "block"


def test_errors_keep_their_order_and_a_session_that_never_started_is_not_scored() -> None:
    health = WireHealth()
    health.note_noise(b"INFO booting")
    inventory = Inventory(errors=["connecting (initialize): closed"])
    parts = _parts(inventory, health, exit_code=3)
    parts.provenance = Provenance(report=ProvenanceReport(), findings=[])
    parts.installation = Installation(installed=parts.installation.installed, egress=[], egress_findings=[])
    parts.probes, parts.late_egress = ProbePhaseReport(errors=["probing skipped: x"]), []
    report = assemble(parts, Config())
    assert parts.lint == [] and report.findings == []
    assert report.errors == ["connecting (initialize): closed",
                             "the server wrote 1 non-JSON-RPC lines to stdout (first: INFO booting)",
                             "the server exited with code 3 before the session started", "probing skipped: x"]
    # Nothing was listed: no score, and the verdict says the scan is incomplete (it was None, and scored 100 once a
    # provenance finding existed: "PASS … score 100/100" for a scan that saw nothing).
    assert report.score is None and report.verdict == "incomplete" and report.status == "incomplete"
    assert [(s.stage, s.reason) for s in report.skipped] == [
        ("listing", "the server exited with code 3 before the session started"),
        ("lint", "the tools were not listed"), ("probes", "the tools were not listed"),
        ("relisting", "the tools were not listed")]


def test_a_scan_cut_short_after_the_install_still_reports_the_install_and_the_teardown() -> None:
    parts = ScanParts(target=parse_target("npm:demo"), session="s1")
    parts.installation = _installation()
    parts.teardown = TeardownInfo(complete=True, seconds=0.1)
    report = assemble(parts, Config())
    assert report.target.version == "1.2.3" and report.timings.install == 4.5
    assert report.sandbox is not None and report.sandbox.teardown == parts.teardown and report.sandbox.network is None
    assert report.provenance is None and report.install is None and report.tools == []


def test_a_known_bad_package_is_refused_before_anything_runs(tmp_path: Path) -> None:
    target = parse_target("npm:postmark-mcp@1.0.16")
    refused = known_bad_refusal(target, Config())
    assert refused is not None
    report = refused_report(target, refused, 0.01, Config())
    assert report.findings == [refused] and report.verdict == "block" and report.sandbox is None
    disabled = Config(disabled=frozenset({refused.rule_id}), source="ci.toml", explicit=True)
    assert known_bad_refusal(target, disabled) is None  # only a config given with --config lets it be scanned
    assert known_bad_refusal(target, dataclasses.replace(disabled, explicit=False)) == refused
    folder = tmp_path / "srv"
    folder.mkdir()
    (folder / "package.json").write_text('{"name": "postmark-mcp", "version": "1.0.16"}')
    assert known_bad_refusal(parse_target(str(folder)), Config()) is None  # a local target is never refused
