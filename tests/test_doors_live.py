"""Issue 14 §1-2 against real containers: a launch command ends in the same sandboxed scan and report as the target
it maps to, and a client config's local servers are each scanned in their own sandbox.

The zoo is the package here (a local folder named by `uvx --from`): the mapping is the door under test, and the
folder needs no registry. The registry shape (`uvx NAME==VERSION` → pypi:NAME==VERSION) is mapped by the same code
(tests/test_doors.py) and scanned once for real below, marked `registry`."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from tests.sandbox_helpers import ZOO, evidence_from_stderr, run_cli

pytestmark = pytest.mark.docker

TIME_VERSION = "2026.10.19"  # a pinned mcp-server-time release (older ones fail to import newer `mcp` releases)


def _comparable(report: dict[str, Any]) -> dict[str, Any]:
    """What a scan found, without what differs run to run (timings, session ids, container ids)."""
    target = {k: v for k, v in report["target"].items() if k != "launch"}
    return {"target": target, "tools": report["tools"], "status": report["status"], "verdict": report["verdict"],
            "score": report["score"]["value"] if report["score"] else None,
            "findings": sorted((f["rule_id"], f["severity"], f["tool"] or "") for f in report["findings"]),
            "command": report["install"]["command"]}


def test_a_launch_command_ends_in_the_same_report_as_its_target(tmp_path, docker_client, no_leftovers):
    direct, mapped = tmp_path / "direct.json", tmp_path / "mapped.json"
    first = run_cli("scan", str(ZOO), "--command", "zoo-plain", "--json", str(direct), "--fail-on", "never")
    second = run_cli("scan", "--json", str(mapped), "--fail-on", "never", "--", "uvx", "--from", str(ZOO),
                     "zoo-plain")
    assert first.returncode == 0, first.stderr[-2000:]
    assert second.returncode == 0, second.stderr[-2000:]
    assert f"mapped the launch command `uvx {ZOO}` to {ZOO} (program zoo-plain)" in second.stderr
    a, b = json.loads(direct.read_text()), json.loads(mapped.read_text())
    assert _comparable(a) == _comparable(b)
    assert a["target"]["launch"] is None
    assert b["target"]["launch"] == {"runner": "uvx", "package": str(ZOO), "config_server": None, "notes": []}
    assert "mapped from" in second.stdout and b["sandbox"]["teardown"]["complete"] is True


def test_a_config_files_local_servers_are_each_scanned_in_their_own_sandbox(tmp_path, docker_client, no_leftovers):
    config = tmp_path / ".mcp.json"
    config.write_text(json.dumps({"mcpServers": {
        "inspector": {"command": "uvx", "args": ["--from", str(ZOO), "zoo-inspector"],
                      "env": {"ZOO_FROM_CONFIG": "config-value"}},
        "plain": {"command": "uvx", "args": ["--from", str(ZOO), "zoo-plain"], "env": {"NOT_PASSED": "x"}},
        "remote": {"url": "https://mcp.example.invalid/mcp"},
    }}))
    out = tmp_path / "servers.json"
    result = run_cli("scan", "--config-file", str(config), "--server", "inspector", "--server", "plain",
                     "--pass-config-env", "--no-probes", "--json", str(out), "--fail-on", "never", timeout=600)
    assert result.returncode == 0, result.stderr[-2000:]
    document = json.loads(out.read_text())
    servers = {s["name"]: s for s in document["servers"]}
    assert set(servers) == {"inspector", "plain"} and all(s["status"] == "scanned" for s in servers.values())
    inspector, plain = servers["inspector"]["report"], servers["plain"]["report"]
    assert inspector["target"]["launch"]["config_server"] == "inspector"
    assert inspector["sandbox"]["session"] != plain["sandbox"]["session"]  # a sandbox each
    assert {t["name"] for t in plain["tools"]} and plain["install"]["command"][0] == "zoo-plain"
    env = evidence_from_stderr(inspector["sandbox"]["stderr"])["env"]
    assert env.get("ZOO_FROM_CONFIG") == "config-value"  # --pass-config-env passed it
    assert servers["plain"]["env_passed"] == ["NOT_PASSED"]
    for label in ("server", "target", "verdict", "score", "top finding"):
        assert label in result.stdout
    assert result.stderr.strip().splitlines()[-1].startswith("exit 0: 2 server(s)")


@pytest.mark.registry
def test_uvx_with_a_pinned_registry_release_is_scanned_as_that_release(tmp_path, docker_client, no_leftovers):
    out = tmp_path / "report.json"
    result = run_cli("scan", "--json", str(out), "--fail-on", "never", "--no-probes", "--",
                     "uvx", f"mcp-server-time=={TIME_VERSION}", "--local-timezone", "UTC", timeout=600)
    # The door is under test, not the release: one whose unpinned dependencies moved on may no longer start (exit 3,
    # said in the report); it is still that release, installed and run with the command's arguments.
    assert result.returncode in (0, 3), result.stderr[-2000:]
    report = json.loads(out.read_text())
    assert report["target"]["requested"] == f"pypi:mcp-server-time=={TIME_VERSION}"
    assert report["target"]["version"] == TIME_VERSION
    assert report["target"]["launch"]["runner"] == "uvx"
    assert not [f for f in report["findings"] if f["rule_id"] == "I1"]  # pinned: what ran is what was vetted
    assert report["install"]["command"][-2:] == ["--local-timezone", "UTC"]
    if report["status"] == "complete":
        assert {"get_current_time", "convert_time"} <= {t["name"] for t in report["tools"]}


def test_a_script_inside_a_folder_target_runs_from_its_copy_in_the_sandbox(tmp_path, docker_client, no_leftovers):
    import shutil

    package = tmp_path / "zoo"
    shutil.copytree(ZOO, package, ignore=shutil.ignore_patterns("build", "*.egg-info", "__pycache__"))
    (package / "run_inspector.py").write_text("from mcp_zoo.servers import inspector\ninspector()\n")
    out = tmp_path / "report.json"
    result = run_cli("scan", str(package), "--json", str(out), "--fail-on", "never", "--no-probes", "--",
                     "python", "run_inspector.py")
    assert result.returncode == 0, result.stderr[-2000:]
    report = json.loads(out.read_text())
    assert report["install"]["command"] == ["python", "/opt/src/pkg/run_inspector.py"]
    assert report["target"]["launch"]["runner"] == "python" and report["tools"]
    assert evidence_from_stderr(report["sandbox"]["stderr"])  # the script itself ran, inside the sandbox


MEMORY = "@modelcontextprotocol/server-memory@2026.8.31"  # the pin tests/test_plugin_live.py scans


@pytest.mark.registry
def test_npx_server_memory_ends_in_a_full_sandboxed_report(tmp_path, docker_client, no_leftovers):
    """The issue's done-when: `mcp-sandbox scan -- npx -y @modelcontextprotocol/server-memory`, end to end."""
    out = tmp_path / "report.json"
    result = run_cli("scan", "--json", str(out), "--fail-on", "never", "--", "npx", "-y", MEMORY, timeout=900)
    assert result.returncode == 0, result.stderr[-2000:]
    assert f"mapped the launch command `npx {MEMORY}` to npm:{MEMORY}" in result.stderr
    report = json.loads(out.read_text())
    assert report["status"] == "complete" and report["verdict"] in ("pass", "review", "block")
    assert report["target"]["requested"] == f"npm:{MEMORY}"
    assert report["target"]["launch"] == {"runner": "npx", "package": MEMORY, "config_server": None, "notes": []}
    assert not [f for f in report["findings"] if f["rule_id"] == "I1"]  # pinned: what ran is what was vetted
    assert {"create_entities", "read_graph"} <= {t["name"] for t in report["tools"]}
    assert report["probes"] and report["sandbox"]["teardown"]["complete"] is True
