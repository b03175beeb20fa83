"""A real sandboxed server whose answers the MCP client refuses cannot fail the scan: a tool breaking its own
outputSchema, or answering something that is not a tools/call result, is P11 with its calls recorded; a handshake
answer the client refuses is the listing's recorded error. Before, either ended the scan as an internal error."""

from __future__ import annotations

import pytest

from scanner.pipeline.inventory import Timeouts
from scanner.pipeline.scan import ScanOptions, run_scan
from scanner.probes.options import ProbeOptions
from tests.sandbox_helpers import ZOO, labelled_containers

pytestmark = pytest.mark.docker


def test_answers_the_client_refuses_are_p11_and_the_scan_completes(docker_client) -> None:
    report = run_scan(ScanOptions(target=str(ZOO), command="zoo-bad-answers", timeouts=Timeouts(startup=30, request=10),
                                  probes=ProbeOptions(timeout=5.0)))
    assert report.status == "complete", report.errors
    p11 = {f.tool: f for f in report.findings if f.rule_id == "P11"}
    assert set(p11) == {"count_notes", "describe_notes", "empty_answer"}
    assert "Invalid structured content returned by tool count_notes" in p11["count_notes"].evidence
    assert "did not return structured content" in p11["describe_notes"].evidence
    assert "is not a tools/call result" in p11["empty_answer"].evidence
    statuses = {(p.tool, p.status) for p in report.probes}
    assert ("echo_text", "ok") in statuses  # the near miss: a tool that answers as it declares
    assert ("count_notes", "protocol_error") in statuses
    assert not any(f.rule_id == "P4" and f.tool in p11 for f in report.findings)  # refused, not an error answer
    leaked = [f for f in report.findings if f.rule_id == "B3" and f.tool == "describe_notes"]
    assert leaked, "the canary in a refused answer went unseen"  # the answer as sent is read, not the refusal
    assert not any(f.rule_id == "B3" and f.tool == "echo_text" for f in report.findings)
    assert labelled_containers(docker_client, report.sandbox.session) == []


def test_a_handshake_answer_the_client_refuses_is_the_listings_error(docker_client) -> None:
    report = run_scan(ScanOptions(target=str(ZOO), command="zoo-bad-handshake", timeouts=Timeouts(startup=30)))
    assert report.status != "failed" and not any("internal error" in error for error in report.errors), report.errors
    assert any("the MCP client refused the answer (Unsupported protocol version from the server: 1999-01-01)" in error
               for error in report.errors), report.errors
    assert labelled_containers(docker_client, report.sandbox.session) == []
