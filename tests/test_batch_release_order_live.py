"""The release diff when the later release is done first, for real: a batch over 2.0.0 of tests/servers/npm-release
(made by tests/test_release_diff_live.second_release: a new host at start-up, a postinstall), then the same batch
directory with 1.0.0 added: when 1.0.0 is done, 2.0.0's report is diffed against it and its row and the summary
block it."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import pytest

from tests.sandbox_helpers import CLI, REPO
from tests.test_release_diff_live import NEW_HOST, SERVERS, second_release

pytestmark = pytest.mark.docker


def _batch(targets: Path, out: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run([*CLI, "batch", str(targets), "--out", str(out), "--jobs", "1", "--retries", "0"],
                          cwd=REPO, capture_output=True, text=True, timeout=900)


def _i12(report: dict) -> list[str]:  # type: ignore[type-arg]
    return [f["message"] for f in report["findings"] if f["rule_id"] == "I12"]


def test_the_later_release_done_first_is_diffed_once_its_baseline_is_done(tmp_path: Path, docker_client,
                                                                          no_leftovers) -> None:
    v2 = second_release(tmp_path / "npm-release-2.0.0")
    targets, out = tmp_path / "targets.txt", tmp_path / "out"
    targets.write_text(f"{v2}\n")
    alone = _batch(targets, out)
    assert alone.returncode == 1, alone.stderr  # its start-up lookup blocks it on its own (B rules)
    (row,) = json.loads((out / "summary.json").read_text())["targets"]
    second_path = out / row["report"]  # a folder's report: reports/npm/mcp-zoo-release/2.0.0+<its row's hash>.json
    assert row["report"].startswith("reports/npm/mcp-zoo-release/2.0.0+")
    first_look = json.loads(second_path.read_text())
    assert first_look["changes_since"] is None and not _i12(first_look)  # nothing to compare 2.0.0 with yet

    targets.write_text(f"{v2}\n{SERVERS / 'npm-release'}\n")
    both = _batch(targets, out)
    assert both.returncode == 1, both.stderr  # 2.0.0's new behaviour now blocks it
    assert "rediffed" in both.stderr and "against 1.0.0: block" in both.stderr
    second = json.loads(second_path.read_text())
    assert second["changes_since"]["previous_version"] == "1.0.0"
    assert {"phase": "run", "host": NEW_HOST} in second["changes_since"]["hosts_added"]
    assert [s.split(":")[0] for s in second["changes_since"]["install_scripts_added"]] == ["mcp-zoo-release"]
    assert any(NEW_HOST in m for m in _i12(second)) and any("install script" in m for m in _i12(second))
    assert second["verdict"] == "block"
    summary = {t["target"]: t for t in json.loads((out / "summary.json").read_text())["targets"]}
    assert summary[str(v2)]["verdict"] == "block" and summary[str(SERVERS / "npm-release")]["verdict"] == "pass"
