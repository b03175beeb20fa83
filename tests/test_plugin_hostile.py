"""The plugin envelope reads a hostile folder on the user's host: a FIFO or a sparse giant for mcp.json, a link from
mcp.json to the user's own config, a manifest nested past json's depth, a symlink loop as a command, a bundled
package of odd shape each end in a finding or a 'not scanned' line, never a hang, an internal error or a read of a
file outside the folder. The CLI cases run in a child process with a time and memory limit."""

from __future__ import annotations

import json
import os
import resource
import subprocess
import sys
from pathlib import Path

import pytest

from scanner.plugins.envelope import check_plugin
from scanner.plugins.servers import plan_plugin

ROOT = Path(__file__).resolve().parent.parent
MCP_SCHEMA = "https://agent-plugins.org/schemas/1.0.0/mcp.schema.json"


def _limit_memory() -> None:
    resource.setrlimit(resource.RLIMIT_AS, (2 << 30, 2 << 30))


def _plugin_json(folder: Path) -> dict[str, object]:
    """`mcp-sandbox plugin FOLDER --json -` in a child process (20 s, 2 GiB); its JSON document."""
    try:
        done = subprocess.run([sys.executable, "-m", "scanner", "plugin", str(folder), "--json", "-"],
                              capture_output=True, text=True, timeout=20, cwd=ROOT, preexec_fn=_limit_memory)
    except subprocess.TimeoutExpired:
        pytest.fail("plugin ran past 20s")
    assert done.returncode in (0, 1), done.stderr
    return json.loads(done.stdout)


def _plugin(tmp_path: Path, mcp: object | None = None) -> Path:
    root = tmp_path / "plugin"
    root.mkdir()
    (root / "plugin.json").write_text('{"name": "p"}', encoding="utf-8")
    if mcp is not None:
        (root / "mcp.json").write_text(json.dumps({"$schema": MCP_SCHEMA, "mcpServers": mcp}), encoding="utf-8")
    return root


def _messages(document: dict[str, object]) -> list[str]:
    return [f["message"] for f in document["findings"]]  # type: ignore[index,union-attr]


def test_a_fifo_for_mcp_json_is_not_opened(tmp_path: Path) -> None:
    root = _plugin(tmp_path)
    os.mkfifo(root / "mcp.json")
    assert "mcp.json is not a regular file (a FIFO, socket or device): not read" in _messages(_plugin_json(root))


def test_a_sparse_giant_mcp_json_is_refused_without_loading_it(tmp_path: Path) -> None:
    root = _plugin(tmp_path)
    with (root / "mcp.json").open("wb") as handle:
        handle.truncate(8 << 30)
    assert "mcp.json is over the 1048576-byte limit" in _messages(_plugin_json(root))


def test_a_link_from_mcp_json_out_of_the_folder_is_not_read(tmp_path: Path) -> None:
    secret = tmp_path / "home-config.json"
    secret.write_text(json.dumps({"mcpServers": {"github": {"type": "stdio", "command": "ghp_SECRET_TOKEN"}}}),
                      encoding="utf-8")
    root = _plugin(tmp_path)
    (root / "mcp.json").symlink_to(secret)
    document = _plugin_json(root)
    assert "ghp_SECRET_TOKEN" not in json.dumps(document) and "github" not in json.dumps(document)
    assert any("is a symbolic link to a file outside the plugin folder" in m for m in _messages(document))
    assert document["servers"] == []


def test_a_manifest_nested_past_jsons_depth_is_fatal_not_an_internal_error(tmp_path: Path) -> None:
    root = tmp_path / "plugin"
    root.mkdir()
    (root / "plugin.json").write_text("[" * 100_000 + "]" * 100_000, encoding="utf-8")
    assert "plugin.json is not valid JSON (nested too deep to read)" in _messages(_plugin_json(root))


def test_a_symlink_loop_as_command_or_cwd_is_an_escape_not_an_internal_error(tmp_path: Path) -> None:
    root = _plugin(tmp_path, {"s": {"type": "stdio", "command": "./loop/x", "cwd": "./loop"}})
    (root / "loop").symlink_to("loop")
    messages = _messages(_plugin_json(root))
    assert any("resolves outside the plugin folder" in m for m in messages)


@pytest.mark.parametrize(("name", "text"), [
    ("pyproject.toml", '[project]\nname = "x"\nversion = "1"\nscripts = 5\n'),
    ("package.json", '{"name": "x", "a": ' + "[" * 100_000 + "]" * 100_000 + "}"),
    ("pyproject.toml", '[project]\nname = "x"\na = ' + "[" * 100_000 + "]" * 100_000 + "\n"),
])
def test_a_bundled_package_of_odd_shape_is_not_scanned_with_a_reason(tmp_path: Path, name: str, text: str) -> None:
    root = _plugin(tmp_path, {"s": {"type": "stdio", "command": "./srv/run"}})
    (root / "srv").mkdir()
    (root / "srv" / "run").write_text("#!/bin/sh\n", encoding="utf-8")
    (root / "srv" / name).write_text(text, encoding="utf-8")
    [planned] = plan_plugin(check_plugin(root))
    assert planned.mapping is None and planned.not_scanned


def test_a_folder_tree_thousands_deep_is_searched_to_a_depth_not_an_internal_error(tmp_path: Path) -> None:
    """os.walk recurses once a level: a plugin 1,200 folders deep made the skills search a RecursionError (exit 3,
    internal error). The search stops at a depth now, and says so."""
    root = _plugin(tmp_path)
    fd = os.open(root, os.O_RDONLY)
    for _ in range(1200):  # one level at a time from the one above (pathlib's mkdir(parents=True) recurses too)
        os.mkdir("a", dir_fd=fd)
        fd, above = os.open("a", os.O_RDONLY, dir_fd=fd), fd
        os.close(above)
    os.close(os.open("SKILL.md", os.O_CREAT | os.O_WRONLY, dir_fd=fd))
    os.close(fd)
    try:
        assert any("stopped looking for misplaced SKILL.md 64 folders deep" in m for m in _messages(_plugin_json(root)))
    finally:  # bottom up, one level at a time: shutil.rmtree recurses as well
        deep = root.joinpath(*["a"] * 1200)
        (deep / "SKILL.md").unlink()
        for folder in [deep, *deep.parents][:1200]:
            folder.rmdir()


@pytest.mark.parametrize("name", ["pyproject.toml", "package.json"])
def test_a_sparse_giant_manifest_in_a_bundled_package_is_refused_without_loading_it(tmp_path: Path, name: str) -> None:
    """The bundled package's manifest was read whole: an 8 GiB sparse pyproject.toml made `scan PLUGIN` a MemoryError
    (internal error) before any server ran. It is a 'not scanned' line now (in a child process: 20 s, 2 GiB)."""
    root = _plugin(tmp_path, {"s": {"type": "stdio", "command": "./srv/run"}})
    (root / "srv").mkdir()
    (root / "srv" / "run").write_text("#!/bin/sh\n", encoding="utf-8")
    with (root / "srv" / name).open("wb") as handle:
        handle.truncate(8 << 30)
    code = ("import sys; from pathlib import Path; from scanner.plugins.envelope import check_plugin; "
            "from scanner.plugins.servers import plan_plugin; "
            "[p] = plan_plugin(check_plugin(Path(sys.argv[1]))); print(p.not_scanned)")
    done = subprocess.run([sys.executable, "-c", code, str(root)], capture_output=True, text=True, timeout=20, cwd=ROOT,
                          preexec_fn=_limit_memory)
    assert done.returncode == 0, done.stderr[-500:]
    assert "is over 1048576 bytes: too big to be a package manifest" in done.stdout
