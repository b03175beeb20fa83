"""Issue 14 §3 against real containers: a plugin folder whose mcp.json declares a bundled server (a `./` command in
a package folder the plugin ships: a copy of the zoo) ends in a full sandboxed report, in one result with a section
per server; a bare program is listed, not run, and a remote entry goes through the --url door. A bundled server
given `${PLUGIN_ROOT}/data.json` gets the path of that file inside the sandbox. The `npx` server of the done-when is scanned from
the registry, marked `registry`."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from tests.sandbox_helpers import ZOO, run_cli

pytestmark = pytest.mark.docker

MEMORY = "@modelcontextprotocol/server-memory@2026.8.31"  # a small pinned npm server (9 tools)


def _plugin(tmp_path: Path, servers: dict[str, object]) -> Path:
    plugin = tmp_path / "my-plugin"
    shutil.copytree(ZOO, plugin / "server", ignore=shutil.ignore_patterns("build", "*.egg-info", "__pycache__"))
    shim = plugin / "server" / "zoo-plain"  # the file the plugin's command names: the package's own entry point
    shim.write_text("#!/usr/bin/env python3\nfrom mcp_zoo.servers import plain\nplain()\n")
    shim.chmod(0o755)
    (plugin / "plugin.json").write_text(json.dumps({
        "$schema": "https://agent-plugins.org/schemas/1.0.0/plugin.schema.json", "name": "my-plugin"}))
    (plugin / "mcp.json").write_text(json.dumps({
        "$schema": "https://agent-plugins.org/schemas/1.0.0/mcp.schema.json", "mcpServers": servers}))
    return plugin


def test_a_plugins_bundled_server_is_run_and_probed_in_the_sandbox(tmp_path, docker_client, no_leftovers):
    plugin = _plugin(tmp_path, {
        "bundled": {"type": "stdio", "command": "./server/zoo-plain"},
        "binary": {"type": "stdio", "command": "my-compiled-server"},
        "remote": {"type": "streamable-http", "url": "https://mcp.example.invalid/mcp"}})
    out = tmp_path / "plugin.json"
    result = run_cli("scan", str(plugin), "--json", str(out), "--fail-on", "never", timeout=600)
    assert result.returncode == 3, result.stderr[-2000:]  # two servers not scanned: listed, said in the exit line
    document = json.loads(out.read_text())
    assert document["envelope"]["findings"] == [] and document["plugin"] == str(plugin.resolve())
    servers = {s["name"]: s for s in document["servers"]}
    bundled = servers["bundled"]
    assert (bundled["status"], bundled["target"]) == ("scanned", str((plugin / "server").resolve()))
    report = bundled["report"]
    assert report["install"]["command"][0] == "zoo-plain" and report["tools"]
    assert report["probes"] and report["sandbox"]["teardown"]["complete"] is True
    assert report["target"]["launch"]["runner"] == "plugin" and report["target"]["launch"]["config_server"] == "bundled"
    assert document["verdict"] == ("block" if report["verdict"] == "block" else "incomplete")  # remote, binary
    assert document["sources"]["./server"]["files_scanned"] > 0  # the bundled source went through `vet` too
    assert servers["binary"]["status"] == "not scanned"
    assert servers["binary"]["reason"].startswith("not auditable: compiled executable")
    remote = servers["remote"]  # went through the --url door: .invalid never answers, and the report says so
    assert (remote["transport"], remote["sandboxed"], remote["report"]["status"]) == ("streamable-http", False,
                                                                                      "incomplete")
    assert "== server bundled: mapped the launch command `plugin ./server/zoo-plain`" in result.stdout
    assert f"plugin verdict: {document['verdict']} (the worst of 2 scanned server(s); 1 not scanned)" in result.stdout
    assert result.stderr.strip().splitlines()[-1].startswith("exit 3: 3 server(s)")


ARGV_SERVER = """import sys
from mcp_zoo.protocol import Server, text_result, tool


def main():
    path = sys.argv[1]
    with open(path, encoding="utf-8") as handle:  # a path left as ${PLUGIN_ROOT}/… does not open: no server
        data = handle.read()
    read = tool("read_data", f"Return the data file this server was given: {path}",
                annotations={"readOnlyHint": True, "destructiveHint": False})
    Server("zoo-argv", [read], calls={"read_data": lambda arguments: text_result(data)}).serve()
"""


def test_plugin_root_in_a_bundled_servers_arguments_is_its_path_in_the_sandbox(tmp_path, docker_client,
                                                                               no_leftovers):
    plugin = tmp_path / "rooted-plugin"  # the plugin's root is the package folder: a copy of the zoo
    shutil.copytree(ZOO, plugin, ignore=shutil.ignore_patterns("build", "*.egg-info", "__pycache__"))
    (plugin / "mcp_zoo" / "argv_file.py").write_text(ARGV_SERVER)
    manifest = plugin / "pyproject.toml"
    manifest.write_text(manifest.read_text().replace("[project.scripts]\n",
                                                     "[project.scripts]\nzoo-argv = \"mcp_zoo.argv_file:main\"\n"))
    (plugin / "zoo-argv").write_text("#!/usr/bin/env python3\nfrom mcp_zoo.argv_file import main\nmain()\n")
    (plugin / "data.json").write_text('{"marker": "plugin-data-7f3a"}')
    (plugin / "plugin.json").write_text(json.dumps({
        "$schema": "https://agent-plugins.org/schemas/1.0.0/plugin.schema.json", "name": "rooted-plugin"}))
    (plugin / "mcp.json").write_text(json.dumps({
        "$schema": "https://agent-plugins.org/schemas/1.0.0/mcp.schema.json", "mcpServers": {
            "argv": {"type": "stdio", "command": "./zoo-argv", "args": ["${PLUGIN_ROOT}/data.json"], "cwd": "./"}}}))
    out = tmp_path / "plugin.json"
    result = run_cli("scan", str(plugin), "--json", str(out), "--fail-on", "never", "--include-responses",
                     timeout=600)
    assert result.returncode == 0, result.stderr[-2000:]
    [server] = json.loads(out.read_text())["servers"]
    report = server["report"]
    [read] = report["tools"]
    assert read["description"].endswith(": /opt/src/pkg/data.json")  # expanded to the installed package path
    probe = next(p for p in report["probes"] if p["tool"] == "read_data")
    assert "plugin-data-7f3a" in probe["response"]  # and the file is there
    assert "cwd ./ not applied" in report["target"]["launch"]["notes"][0]


@pytest.mark.registry
def test_a_plugin_with_a_bundled_and_an_npx_server(tmp_path, docker_client, no_leftovers):
    plugin = _plugin(tmp_path, {"bundled": {"type": "stdio", "command": "./server/zoo-plain"},
                                "memory": {"type": "stdio", "command": "npx", "args": ["-y", MEMORY]}})
    out = tmp_path / "plugin.json"
    result = run_cli("scan", str(plugin), "--json", str(out), "--fail-on", "never", timeout=900)
    document = json.loads(out.read_text())
    servers = {s["name"]: s for s in document["servers"]}
    assert result.returncode == 0, result.stderr[-2000:]
    assert servers["memory"]["target"] == f"npm:{MEMORY}" and servers["memory"]["status"] == "scanned"
    assert servers["memory"]["report"]["tools"] and servers["bundled"]["report"]["tools"]
    verdicts = [s["report"]["verdict"] for s in servers.values()]
    assert document["verdict"] == max(verdicts, key=("pass", "review", "block").index)
