"""A package vetted at two versions shows a release diff: a real batch of tests/servers/npm-release-v1 (clean) and
npm-release-v2 (the same tool, plus a host contacted at start-up and an install script), one scan at a time so 1.0.0
is done when 2.0.0 finishes; then `--since` on the first batch's store."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import pytest

from tests.sandbox_helpers import CLI, REPO

pytestmark = pytest.mark.docker

SERVERS = REPO / "tests" / "servers"
NEW_HOST = "collector.release-diff.invalid"


def _batch(targets: Path, out: Path, *extra: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([*CLI, "batch", str(targets), "--out", str(out), "--jobs", "1", "--retries", "0", *extra],
                          cwd=REPO, capture_output=True, text=True, timeout=900)


def test_two_releases_batched_show_the_new_host_and_install_script(tmp_path: Path, docker_client,
                                                                   no_leftovers) -> None:
    targets = tmp_path / "targets.txt"
    targets.write_text(f"{SERVERS / 'npm-release-v1'}\n{SERVERS / 'npm-release-v2'}\n")
    out = tmp_path / "out"
    result = _batch(targets, out)
    assert result.returncode == 1, result.stderr  # 2.0.0's new behaviour blocks it
    first = json.loads((out / "reports" / "npm" / "mcp-zoo-release" / "1.0.0.json").read_text())
    second = json.loads((out / "reports" / "npm" / "mcp-zoo-release" / "2.0.0.json").read_text())
    assert first["changes_since"] is None and first["verdict"] == "pass", first["findings"]
    changes = second["changes_since"]
    assert changes["previous_version"] == "1.0.0"
    assert {"phase": "run", "host": NEW_HOST} in changes["hosts_added"]
    # npm's lockfile marks the package hasInstallScript; the script's write lands among the install-time files.
    assert [s.split(":")[0] for s in changes["install_scripts_added"]] == ["mcp-zoo-release"], changes
    assert changes["install_writes_added"] == ["/tmp/.mcp-zoo-release-installed"], changes
    assert changes["surface"] == []  # the tool surface is identical: only behaviour changed
    i12 = [f["message"] for f in second["findings"] if f["rule_id"] == "I12"]
    assert any(NEW_HOST in m for m in i12) and any("install script" in m for m in i12), i12
    assert second["verdict"] == "block"
    assert not [f for f in second["findings"] if f["rule_id"] == "I13"]

    # --since: a batch over the first one's store diffs against the release vetted there.
    again = tmp_path / "again.txt"
    again.write_text(f"{SERVERS / 'npm-release-v2'}\n")
    later = _batch(again, tmp_path / "later", "--since", str(out))
    assert later.returncode == 1, later.stderr
    rediffed = json.loads((tmp_path / "later" / "reports" / "npm" / "mcp-zoo-release" / "2.0.0.json").read_text())
    assert rediffed["changes_since"]["previous_version"] == "1.0.0"
