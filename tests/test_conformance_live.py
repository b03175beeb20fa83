"""The conformance stage in a real sandbox, against the two zoo servers of tests/servers/zoo/mcp_zoo/revisions.py:
a handshake-only server with draft-07 schemas is faulted for exactly what its wire log shows, a dual-revision
2026-07-28 server passes every check, and the default revision starts no fresh server and changes no gate."""

from __future__ import annotations

import pytest

from scanner.conformance.model import ConformanceOptions
from scanner.pipeline.inventory import Timeouts
from scanner.pipeline.scan import ScanOptions, run_scan
from scanner.probes.runner import ProbeOptions
from scanner.report.model import Report
from tests.sandbox_helpers import ZOO, labelled_containers

pytestmark = pytest.mark.docker
NEXT = "2026-07-28"


def _scan(command: str, conformance: ConformanceOptions) -> Report:
    return run_scan(ScanOptions(target=str(ZOO), command=command, timeouts=Timeouts(startup=60),
                                probes=ProbeOptions(enabled=False), conformance=conformance))


def _outcomes(report: Report) -> dict[str, str]:
    assert report.conformance is not None
    return {check.check: check.outcome for check in report.conformance.checks}


@pytest.fixture(scope="module")
def legacy_full() -> Report:
    return _scan("zoo-revision-legacy", ConformanceOptions(NEXT, full=True))


def test_a_handshake_only_server_is_faulted_for_what_its_wire_log_shows(legacy_full: Report) -> None:
    wire = sorted((f.rule_id, f.severity, f.tool or "") for f in legacy_full.findings if f.rule_id.startswith("W"))
    # echo_text declares draft-07 (allowed), lookup_note uses `definitions` (still valid 2020-12): info both
    assert wire == [("W1", "info", "echo_text"), ("W1", "info", "lookup_note"), ("W13", "info", ""),
                    ("W3", "error", ""), ("W6", "error", "")]
    assert legacy_full.status == "complete" and legacy_full.verdict != "block"  # conformance never blocks
    log = legacy_full.conformance.exchange
    assert log[0].startswith('-> {"jsonrpc":"2.0","id":1,"method":"tools/list"') and "2026-07-28" in log[0]
    assert '"Server not initialized"' in log[1] and '"method":"initialize"' in log[2]
    assert any('"Method not found: server/discover"' in line for line in log)
    outcomes = _outcomes(legacy_full)
    # Right in the revision it serves: -32002, ping answered, no resultType. Noted, never faulted.
    assert {outcomes[name] for name in ("legacy-resource-error-code", "missing-result-type",
                                        "missing-cacheable-fields", "legacy-error-code-renumbered",
                                        "ping-still-answered")} == {"not-applicable"}
    assert outcomes["requires-initialize-handshake"] == "not-applicable"  # one observation, one finding: W6


def test_the_fresh_server_is_removed(legacy_full: Report) -> None:
    import docker

    assert legacy_full.sandbox is not None and legacy_full.sandbox.teardown.complete
    assert labelled_containers(docker.from_env(), legacy_full.sandbox.session) == []


def test_the_revision_core_checks_alone() -> None:
    report = _scan("zoo-revision-legacy", ConformanceOptions(NEXT))
    assert list(_outcomes(report)) == ["json-schema-dialect", "requires-initialize-handshake",
                                       "missing-server-discover", "legacy-resource-error-code"]
    assert sorted(f.rule_id for f in report.findings if f.rule_id in ("W2", "W3", "W6")) == ["W2", "W3"]


def test_a_dual_revision_server_passes_every_check() -> None:
    report = _scan("zoo-revision-2026", ConformanceOptions(NEXT, full=True))
    assert [f.rule_id for f in report.findings if f.rule_id.startswith("W")] == []
    assert set(_outcomes(report).values()) == {"passed"} and len(report.conformance.checks) == 13
    assert report.server.protocol_version == NEXT and report.status == "complete"


def test_the_default_revision_only_reads_the_schemas_at_info() -> None:
    report = _scan("zoo-revision-legacy", ConformanceOptions())
    assert {(f.rule_id, f.severity) for f in report.findings if f.rule_id.startswith("W")} == {("W1", "info")}
    assert list(_outcomes(report)) == ["json-schema-dialect"] and report.conformance.exchange == []
