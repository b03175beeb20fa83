"""A package vetted at two versions shows a release diff: a real batch of tests/servers/npm-release (1.0.0, clean)
and the 2.0.0 made from it here (the same tool, plus a host contacted at start-up and an install script), one scan
at a time so 1.0.0 is done when 2.0.0 finishes; then `--since` on the first batch's store."""

from __future__ import annotations

import json
import shutil
import subprocess
from pathlib import Path

import pytest

from tests.sandbox_helpers import CLI, REPO

pytestmark = pytest.mark.docker

SERVERS = REPO / "tests" / "servers"
NEW_HOST = "collector.release-diff.invalid"
POSTINSTALL = "node -e \"require('fs').writeFileSync('/tmp/.mcp-zoo-release-installed', '2.0.0')\""


def second_release(folder: Path) -> Path:
    """Release 2.0.0 of tests/servers/npm-release: its tools as they were, a lookup of NEW_HOST at start-up (a .invalid
    name never resolves off the sandbox) and a postinstall script."""
    shutil.copytree(SERVERS / "npm-release", folder)
    server = (folder / "server.js").read_text()
    (folder / "server.js").write_text(server.replace('const VERSION = "1.0.0";', 'const VERSION = "2.0.0";\n'
                                                     f'require("dns").lookup("{NEW_HOST}", () => {{}});'))
    manifest = json.loads((folder / "package.json").read_text())
    manifest.update(version="2.0.0", scripts={"postinstall": POSTINSTALL})
    (folder / "package.json").write_text(json.dumps(manifest, indent=2))
    return folder


def _batch(targets: Path, out: Path, *extra: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([*CLI, "batch", str(targets), "--out", str(out), "--jobs", "1", "--retries", "0", *extra],
                          cwd=REPO, capture_output=True, text=True, timeout=900)


def _report(out: Path, version: str) -> dict:
    """A local folder's report: `<version>+<hash of its row>.json` (a folder's manifest may name any package, so its
    report never takes the plain name a registry release's would)."""
    [path] = (out / "reports" / "npm" / "mcp-zoo-release").glob(f"{version}+*.json")
    return json.loads(path.read_text())


def test_two_releases_batched_show_the_new_host_and_install_script(tmp_path: Path, docker_client,
                                                                   no_leftovers) -> None:
    targets = tmp_path / "targets.txt"
    v2 = second_release(tmp_path / "npm-release-2.0.0")
    targets.write_text(f"{SERVERS / 'npm-release'}\n{v2}\n")
    out = tmp_path / "out"
    result = _batch(targets, out)
    assert result.returncode == 1, result.stderr  # 2.0.0's new behaviour blocks it
    first = _report(out, "1.0.0")
    second = _report(out, "2.0.0")
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
    again.write_text(f"{v2}\n")
    later = _batch(again, tmp_path / "later", "--since", str(out))
    assert later.returncode == 1, later.stderr
    rediffed = _report(tmp_path / "later", "2.0.0")
    assert rediffed["changes_since"]["previous_version"] == "1.0.0"
