"""A crash whose suspects cannot all be sent again, in a real sandbox (zoo-replay-stall, tests/servers/zoo/mcp_zoo/
replay.py): the first suspect sent again hangs the fresh server, so P6 names the likeliest suspect (the call out when
the server ended) and says the others were not sent, and the hang itself is P7's; the crash is not left without a P6,
and no restart is made for nothing once no probe is left."""

from __future__ import annotations

import pytest

from scanner.pipeline.inventory import Timeouts
from scanner.pipeline.scan import ScanOptions, run_scan
from scanner.probes.runner import ProbeOptions
from tests.sandbox_helpers import ZOO, labelled_containers

pytestmark = pytest.mark.docker


def test_a_suspect_that_hangs_the_fresh_server_still_leaves_the_crash_a_p6(docker_client) -> None:
    report = run_scan(ScanOptions(target=str(ZOO), command="zoo-replay-stall", timeouts=Timeouts(startup=20, request=10),
                                  probes=ProbeOptions(timeout=3.0)))
    calls = [(p.tool, p.label, p.status) for p in report.probes]
    assert calls[2:5] == [("stage_upload", "generated", "ok"), ("commit_upload", "generated", "ok"),
                          ("purge_uploads", "generated", "crashed")], calls
    assert calls[5:] == [("stage_upload", "generated (sent again)", "timeout")], calls  # the others not sent again
    [crash] = [f for f in report.findings if f.rule_id == "P6"]
    assert crash.tool == "purge_uploads", crash.message
    assert "during probe 'generated'" in crash.message and "left it unusable" in crash.message
    assert "'generated' of 'commit_upload'" in crash.message and "the others were not sent" in crash.message
    [hang] = [f for f in report.findings if f.rule_id == "P7"]
    assert hang.tool == "stage_upload"
    sandboxes = {b.sandbox for b in report.behavior}
    assert sandboxes == {0, 1}, sandboxes  # the suspect was sent to restart 1; none after it: no probe was left
    assert labelled_containers(docker_client, report.sandbox.session) == []


def test_a_server_that_ends_just_after_the_last_call_answered_is_p6s(docker_client) -> None:
    """No call is left to find it gone: the runner looks once the last state-changing answer's window has passed."""
    report = run_scan(ScanOptions(target=str(ZOO), command="zoo-last-exit", timeouts=Timeouts(startup=20, request=10),
                                  probes=ProbeOptions(timeout=3.0)))
    assert [(p.tool, p.status) for p in report.probes] == [("status", "ok"), ("finish_job", "ok")]
    [crash] = [f for f in report.findings if f.rule_id == "P6"]
    assert crash.tool == "finish_job", crash.message
    assert labelled_containers(docker_client, report.sandbox.session) == []
