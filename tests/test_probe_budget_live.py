"""`scan --max-calls N`: a tool the call budget leaves uncalled is listed as not probed, and the scan is incomplete
(exit 3, the last line on stderr says why), never a clean pass over tools whose behaviour was never seen."""

from __future__ import annotations

import json

import pytest

from tests.sandbox_helpers import ZOO, run_cli


@pytest.mark.docker
def test_a_budget_that_leaves_tools_uncalled_makes_the_scan_incomplete(tmp_path, no_leftovers):
    out = tmp_path / "report.json"
    result = run_cli("scan", str(ZOO), "--command", "zoo-paged", "--max-calls", "3", "--no-error-probes",
                     "--fail-on", "never", "--json", str(out))
    assert result.returncode == 3, result.stderr[-2000:]
    data = json.loads(out.read_text())
    assert data["status"] == "incomplete"
    called = [p for p in data["probes"] if p["status"] != "not_probed"]
    uncalled = [p for p in data["probes"] if p["status"] == "not_probed"]
    assert len(called) == 3 and len(uncalled) == 22  # 25 tools, one generated probe each
    assert all("over the scan's budget of 3 calls" in p["error"] for p in uncalled)
    assert any("budget of 3 calls: 22 tools never called" in error for error in data["errors"])
    assert "budget of 3 calls" in result.stderr.strip().splitlines()[-1]


def test_a_budget_out_of_range_is_a_usage_error() -> None:
    result = run_cli("scan", "pypi:mcp-server-time", "--max-calls", "0")
    assert result.returncode == 2 and "--max-calls" in result.stderr and "Traceback" not in result.stderr
