"""B1 on a real sandbox: a read-only tool that refreshes git's index and fills its own cache gets an info naming
them; read-only tools that make a git branch or leave a file in the workspace stay errors naming the user data."""

from __future__ import annotations

import pytest

from scanner.pipeline.inventory import Timeouts
from scanner.pipeline.scan import ScanOptions, run_scan
from scanner.probes.runner import ProbeOptions
from scanner.report.model import Report
from tests.sandbox_helpers import ZOO

REPO = "/workspace/projects/demo-repo"


@pytest.fixture(scope="module")
def report() -> Report:
    scanned = run_scan(ScanOptions(target=str(ZOO), command="zoo-probe-bookkeeper",
                                   timeouts=Timeouts(startup=20, request=10), probes=ProbeOptions(timeout=5.0)))
    assert scanned.sandbox.teardown.complete
    return scanned


def b1(report: Report, tool: str) -> list:
    return [f for f in report.findings if f.rule_id == "B1" and f.tool == tool]


@pytest.mark.docker
def test_an_index_refresh_and_the_tools_own_cache_are_an_info_not_an_error(report):
    record = next(b for b in report.behavior if b.tool == "repo_status" and b.files.modified)
    assert f"{REPO}/.git/index" in record.files.modified and f"{REPO}/.git/index" not in record.files.resized
    found = b1(report, "repo_status")
    assert [f.severity for f in found] == ["info"], found
    message = found[0].message
    assert "changed no user data" in message and f"{REPO}/.git/index" in message
    assert "VCS bookkeeping [git index refreshed" in message and "~/.cache/zoo-bookkeeper" in message


@pytest.mark.docker
def test_a_new_git_branch_from_a_read_only_tool_stays_an_error(report):
    found = b1(report, "repo_last_commit")
    assert [f.severity for f in found] == ["error"], found
    head, _, rest = found[0].message.partition("Not user data")
    assert "changed user data: created" in head and f"{REPO}/.git/refs/heads/zoo-last-seen [a git ref" in head
    assert "logs/refs/heads/zoo-last-seen" in rest  # the reflog listed as bookkeeping beside it


@pytest.mark.docker
def test_a_file_left_in_the_workspace_by_a_read_only_tool_stays_an_error(report):
    found = b1(report, "count_notes")
    assert [f.severity for f in found] == ["error"], found
    assert "changed user data: created /workspace/notes/.note-count" in found[0].message
    assert report.verdict == "block"


@pytest.mark.docker
@pytest.mark.registry
def test_the_official_git_server_is_not_blocked_for_the_index_refresh_of_git_status(tmp_path, no_leftovers):
    """issue 11 §5: mcp-server-git's git_status was a B1 error (BLOCK) for the index refresh git does on every status.
    Scanned as a user would, pointed at the seeded repository; about 15 s once the install is cached."""
    import json

    from tests.sandbox_helpers import run_cli

    out = tmp_path / "report.json"
    result = run_cli("scan", "pypi:mcp-server-git==2026.10.19", "--json", str(out), "--fail-on", "never", "-q",
                     "--", "--repository", REPO, timeout=600)
    assert result.returncode == 0, result.stderr[-2000:]
    scanned = json.loads(out.read_text())
    found = [f for f in scanned["findings"] if f["rule_id"] == "B1"]
    assert [(f["tool"], f["severity"]) for f in found] == [("git_status", "info")], found
    assert f"{REPO}/.git/index" in found[0]["message"] and "VCS bookkeeping" in found[0]["message"]
    assert not [f for f in scanned["findings"] if f["severity"] == "error"]
    assert scanned["verdict"] != "block"
