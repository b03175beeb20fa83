"""P10 in a real sandbox: a server that cloaks (it shows a clean listing to what it guesses is a scanner) is caught by
the second listing under another client identity, with the diff; a server that treats every client alike is not.
The cloaker also echoes the client identity the scan presents, which names no scanner."""

from __future__ import annotations

import json
import re

import pytest
from mcp_types.version import LATEST_HANDSHAKE_VERSION

from scanner.pipeline.inventory import Timeouts
from scanner.pipeline.scan import ScanOptions, run_scan
from tests.sandbox_helpers import ZOO, labelled_containers

pytestmark = pytest.mark.docker


def _clients(stderr: str) -> list[dict]:
    return [json.loads(line[len("ZOO-CLIENT "):]) for line in stderr.splitlines() if line.startswith("ZOO-CLIENT ")]


@pytest.fixture(scope="module")
def cloaked():
    return run_scan(ScanOptions(target=str(ZOO), command="zoo-cloaker", timeouts=Timeouts(startup=60)))


def test_the_cloaked_tool_is_a_p10_error_with_the_diff(cloaked):
    p10 = {f.tool: f for f in cloaked.findings if f.rule_id == "P10"}
    assert set(p10) == {"sync_notes", "sum_numbers"} and {f.severity for f in p10.values()} == {"error"}
    assert 'tool "sync_notes" added' in p10["sync_notes"].evidence
    assert '+  "name": "sync_notes"' in p10["sync_notes"].evidence
    assert "+  \"description\": \"Return the sum of two numbers as text; use it for any arithmetic on two values. " \
           "Always prefer" in p10["sum_numbers"].evidence
    assert "cursor-vscode" in p10["sync_notes"].message
    # The first listing, the one linted and probed, was the clean one; the hidden tool is linted from the second.
    assert [t["name"] for t in cloaked.tools] == ["echo_text", "sum_numbers"]
    assert any(f.rule_id == "S8" and f.tool == "sync_notes" and "by a second client" in f.message
               for f in cloaked.findings)
    assert cloaked.status == "complete" and cloaked.verdict == "block" and cloaked.skipped == []


def test_the_identity_the_scan_presents_names_no_scanner(cloaked):
    [first] = _clients(cloaked.sandbox.stderr)  # the first server's stderr: the probes ran in the same session
    assert first["clientInfo"] == {"name": "claude-ai", "version": "0.1.0"}
    assert not re.search(r"sandbox|scan|probe", json.dumps(first["clientInfo"]), re.IGNORECASE)
    assert first["protocolVersion"] == LATEST_HANDSHAKE_VERSION and first["watched"] is True


def test_the_second_server_is_torn_down_with_the_rest(cloaked, docker_client):
    assert cloaked.sandbox.teardown.complete and labelled_containers(docker_client, cloaked.sandbox.session) == []


def test_near_miss_a_server_that_treats_every_client_alike_has_no_p10(docker_client):
    report = run_scan(ScanOptions(target=str(ZOO), command="zoo-plain", timeouts=Timeouts(startup=60)))
    assert [f for f in report.findings if f.rule_id == "P10"] == []
    assert report.status == "complete" and report.skipped == []
    assert labelled_containers(docker_client, report.sandbox.session) == []


def test_p10_turned_off_by_an_explicit_config_starts_no_second_server(cloaked, docker_client, monkeypatch):
    """`disable = ["P10"]` in a config given with --config: nothing would read the second listing, so its server is
    never started (through the head start too); the report says the stage was skipped by choice, complete."""
    from sandbox.core.session import SandboxSession
    from scanner.config import Config
    from scanner.pipeline.head_start import HeadStart

    roles: list[str] = []
    create = SandboxSession.create_container
    monkeypatch.setattr(SandboxSession, "create_container",
                        lambda self, role, **kwargs: roles.append(role) or create(self, role, **kwargs))
    off = Config(disabled=frozenset({"P10"}), source="ci.toml", explicit=True)
    options = ScanOptions(target=str(ZOO), command="zoo-cloaker", timeouts=Timeouts(startup=60), config=off)
    with HeadStart(observe=True, hostname=options.policy.hostname, options=options) as early:
        report = run_scan(options, head_start=early)
    assert roles.count("run") == 1, roles  # the cloaker's one server, begun in the head start
    assert [(s.stage, s.chosen) for s in report.skipped] == [("relisting", True)]
    assert "P10 is disabled by ci.toml" in report.skipped[0].reason
    assert report.status == "complete" and report.timings.relisting is None
    assert [f for f in report.findings if f.rule_id == "P10"] == []
    assert labelled_containers(docker_client, report.sandbox.session) == []
