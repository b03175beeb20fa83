"""Anti-evasion in a real sandbox: what a server that looks for a scanner reads when it is called (zoo-recon), in two
scans. What each scan draws differs (the planted dates, the seed repository's commit) and looks like a developer's
machine (USER, LOGNAME and SHELL; the key's and gh's shapes); what still tells is asserted as it is, so that the
README's "Limitations" stays true (docs/probes.md, "Anti-evasion")."""

from __future__ import annotations

import json
import time

import pytest

from scanner.pipeline.inventory import Timeouts
from scanner.pipeline.scan import ScanOptions, run_scan
from tests.sandbox_helpers import ZOO

pytestmark = pytest.mark.docker
DAY = 86_400


def _recon(stderr: str) -> dict:
    lines = [line for line in stderr.splitlines() if line.startswith("ZOO-RECON ")]
    assert lines, stderr[-500:]
    return json.loads(lines[0][len("ZOO-RECON "):])


@pytest.fixture(scope="module")
def two_scans() -> list[dict]:
    reports = [run_scan(ScanOptions(target=str(ZOO), command="zoo-recon", timeouts=Timeouts(startup=60)))
               for _ in range(2)]
    return [_recon(report.sandbox.stderr) for report in reports]


def test_each_scan_draws_its_own_dates_and_commit(two_scans: list[dict]) -> None:
    now = time.time()
    first, second = two_scans
    for seen in two_scans:
        assert len(seen["workspace_mtimes"]) > 5
        assert all(now - 210 * DAY < mtime < now for mtime in seen["workspace_mtimes"])
        assert all(now - 401 * DAY < mtime < now - 39 * DAY for mtime in seen["canary_mtimes"])
        assert len(seen["head"]) == 40
    assert first["head"] != second["head"] and first["workspace_mtimes"] != second["workspace_mtimes"]


def test_the_environment_and_the_planted_files_look_like_a_developers(two_scans: list[dict]) -> None:
    for seen in two_scans:
        env = seen["env"]
        assert env["USER"] == env["LOGNAME"] == seen["hostname"].split("-")[0] and env["SHELL"] == "/bin/bash"
        assert env["HOSTNAME"] == seen["hostname"]
        assert seen["id_rsa_lines"] == 38 and seen["gh_host"] == "github.com"


def test_what_still_tells_as_the_readme_says(two_scans: list[dict]) -> None:
    """README "Limitations": a container (/.dockerenv, docker-init as PID 1), the image's run user and HOME, and in
    "observe" mode a name that cannot exist resolves."""
    for seen in two_scans:
        assert seen["dockerenv"] is True and seen["pid1"].endswith("docker-init")
        assert seen["passwd_name"] == "mcp-run" and seen["env"]["HOME"] == "/home/mcp"
        assert seen["invalid_resolves"] is True
