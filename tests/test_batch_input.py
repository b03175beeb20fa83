"""`mcp-sandbox batch` INPUT: a text file of targets, a registry export, a client config; bad input is exit 2."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from scanner.batch.inputs import read_input
from scanner.batch.targets import BatchTarget
from scanner.errors import UsageError
from tests.cli_helpers import run_cli
from tests.sandbox_helpers import ZOO


def _write(tmp_path: Path, name: str, content: Any) -> Path:
    path = tmp_path / name
    path.write_text(content if isinstance(content, str) else json.dumps(content), encoding="utf-8")
    return path


def test_a_text_file_gives_one_target_a_line_in_the_scan_grammar(tmp_path: Path) -> None:
    (tmp_path / "zoo").symlink_to(ZOO)
    path = _write(tmp_path, "targets.txt", "# vetted weekly\n\nnpm:@scope/server@1.2.3 -- /workspace --flag\n"
                  "pypi:mcp-server-time==0.6.2   # inline comment\n./zoo --command zoo-plain\n"
                  "npm:left-pad\nnpm:left-pad\n")
    targets = read_input(path)
    assert [t.target for t in targets] == ["npm:@scope/server@1.2.3", "pypi:mcp-server-time==0.6.2",
                                           str((tmp_path / "zoo").resolve()), "npm:left-pad"]  # duplicate once
    assert targets[0].server_args == ("/workspace", "--flag")
    assert targets[2].command == "zoo-plain" and targets[2].origin.endswith("targets.txt:5")
    assert all(t.unsupported is None for t in targets)


def test_latest_drops_registry_versions_and_keeps_local_targets(tmp_path: Path) -> None:
    path = _write(tmp_path, "t.txt", f"npm:@scope/server@1.2.3\npypi:mcp-server-time==0.6.2\n{ZOO} --command x\n")
    assert [t.target for t in read_input(path, latest=True)] == ["npm:@scope/server", "pypi:mcp-server-time",
                                                                 str(ZOO)]


@pytest.mark.parametrize(("line", "message"), [
    ("npm:Not_Valid", "t.txt:2: 'Not_Valid' is not a valid npm package name"),
    ("pypi:foo>=1", "t.txt:2: pypi target 'foo>=1': give an exact version"),
    ("./missing-folder", "t.txt:2: "),
    ("npm:ok --env A=B", "t.txt:2: unexpected '--env'"),
    ("npm:ok 'unterminated", "t.txt:2: cannot be split into words"),
    ("npm:ok --command", "t.txt:2: unexpected '--command'"),
])
def test_a_bad_line_names_its_line(tmp_path: Path, line: str, message: str) -> None:
    path = _write(tmp_path, "t.txt", f"npm:fine\n{line}\n")
    with pytest.raises(UsageError) as caught:
        read_input(path)
    assert message in str(caught.value)


def test_a_registry_export_gives_npm_and_pypi_packages_and_records_oci_as_unsupported(tmp_path: Path) -> None:
    export = {"servers": [
        {"server": {"name": "io.github.a/fs", "packages": [
            {"registryType": "npm", "identifier": "@a/fs-server", "version": "1.0.2", "transport": {"type": "stdio"},
             "packageArguments": [{"type": "positional", "value": "/workspace"},
                                  {"type": "named", "name": "--mode", "value": "ro"},
                                  {"type": "positional", "valueHint": "needs the user"}]},
            {"registryType": "oci", "identifier": "docker.io/a/fs", "version": "1.0.2"}]}, "_meta": {}},
        {"server": {"name": "io.github.b/time", "packages": [
            {"registryType": "pypi", "identifier": "mcp-server-time", "version": "0.6.2"}]}},
        {"server": {"name": "com.example/remote", "remotes": [{"type": "sse", "url": "https://x.invalid/sse"}]}},
        {"server": {"name": "io.github.c/bad", "packages": [
            {"registryType": "npm", "identifier": "../../etc/passwd", "version": "1.0.0"},
            {"registryType": "npm", "identifier": "web-server", "version": "1.0.0",
             "transport": {"type": "streamable-http"}}]}},
    ], "metadata": {"count": 4}}
    targets = read_input(_write(tmp_path, "export.json", export))
    runnable = [t for t in targets if t.unsupported is None]
    assert [(t.target, t.server_args) for t in runnable] == [
        ("npm:@a/fs-server@1.0.2", ("/workspace", "--mode", "ro")), ("pypi:mcp-server-time==0.6.2", ())]
    reasons = [t.unsupported for t in targets if t.unsupported]
    assert reasons[0] == "OCI images are not supported yet"
    assert reasons[1] == "a remote server (no package to install)"
    assert reasons[2].startswith("not a valid target:")
    assert "streamable-http" in reasons[3]


def test_a_single_server_json_and_a_bare_list_are_exports_too(tmp_path: Path) -> None:
    entry = {"name": "io.github.a/x", "packages": [{"registryType": "npm", "identifier": "x-mcp", "version": "2.0.0"}]}
    assert [t.target for t in read_input(_write(tmp_path, "one.json", entry))] == ["npm:x-mcp@2.0.0"]
    assert [t.target for t in read_input(_write(tmp_path, "list.json", [entry, entry]))] == ["npm:x-mcp@2.0.0"]


def test_an_export_package_served_by_another_registry_is_not_scanned_as_the_public_ones(tmp_path: Path) -> None:
    """`registryBaseUrl` names where the client fetches the package: a package of that name on the public registry is
    another package, so it is recorded as unsupported with the reason (the public registries themselves pass)."""
    def entry(kind: str, base: str) -> dict[str, Any]:
        return {"registryType": kind, "identifier": "x-mcp", "version": "2.0.0", "registryBaseUrl": base}
    public = {"name": "io.github.a/x", "packages": [entry("npm", "https://registry.npmjs.org"),
                                                    entry("pypi", "https://pypi.org/")]}
    targets = read_input(_write(tmp_path, "public.json", public))
    assert [(t.target, t.unsupported) for t in targets] == [("npm:x-mcp@2.0.0", None), ("pypi:x-mcp==2.0.0", None)]
    for kind, host in (("npm", "npm.example.invalid"), ("pypi", "pypi.example.invalid")):
        other = {"name": "io.github.a/x", "packages": [entry(kind, f"https://{host}/simple")]}
        (target,) = read_input(_write(tmp_path, f"{kind}.json", other))
        assert f"served by another registry ({host})" in (target.unsupported or "")


def test_an_export_registry_url_that_does_not_parse_is_unsupported_not_a_crash(tmp_path: Path) -> None:
    """`https://[registry.npmjs.org` made urlsplit raise (an unclosed IPv6 bracket): one malformed entry of other
    people's data ended the batch as an internal error before anything ran. It is that entry's unsupported row."""
    export = {"name": "io.github.a/x", "packages": [
        {"registryType": "npm", "identifier": "x-mcp", "version": "2.0.0", "registryBaseUrl": "https://[registry"},
        {"registryType": "npm", "identifier": "y-mcp", "version": "1.0.0"}]}
    bad, good = read_input(_write(tmp_path, "export.json", export))
    assert bad.unsupported is not None and "served by another registry (https://[registry)" in bad.unsupported
    assert (good.target, good.unsupported) == ("npm:y-mcp@1.0.0", None)


def test_a_package_listed_for_another_transport_first_is_still_scanned_for_stdio(tmp_path: Path) -> None:
    """Rows are kept once per key, the first winning: an unsupported streamable-http listing of a package took the
    key of its stdio listing after it, so the package was never scanned. A row that can be scanned wins now."""
    def package(transport: str) -> dict[str, Any]:
        return {"registryType": "npm", "identifier": "x-mcp", "version": "2.0.0", "transport": {"type": transport}}
    export = {"name": "io.github.a/x", "packages": [package("streamable-http"), package("stdio")]}
    (target,) = read_input(_write(tmp_path, "one.json", export))
    assert (target.target, target.unsupported, target.origin) == ("npm:x-mcp@2.0.0", None,
                                                                    "servers[0].packages[1] (io.github.a/x)")
    other = {"name": "io.github.a/x", "packages": [
        {**package("stdio"), "registryBaseUrl": "https://npm.example.invalid"}, package("stdio")]}
    assert [t.unsupported is None for t in read_input(_write(tmp_path, "two.json", other))] == [False, True]


def test_a_client_config_gives_the_package_each_launch_command_runs(tmp_path: Path) -> None:
    config = {"mcpServers": {
        "fs": {"command": "npx", "args": ["-y", "@modelcontextprotocol/server-filesystem@2025.8.21", "/tmp"]},
        "time": {"command": "uvx", "args": ["mcp-server-time==0.6.2"]},
        "floating": {"command": "npx", "args": ["-y", "some-server@^1.0.0"]},
        "remote": {"url": "https://mcp.example.invalid/sse"},
        "image": {"command": "docker", "args": ["run", "-i", "--rm", "ghcr.io/a/b:1"]},
    }}
    targets = {t.origin: t for t in read_input(_write(tmp_path, "claude_desktop_config.json", config))}
    assert targets["fs"].target == "npm:@modelcontextprotocol/server-filesystem@2025.8.21"
    assert targets["time"].target == "pypi:mcp-server-time==0.6.2"
    assert targets["floating"].target == "npm:some-server"  # a range is scanned at the newest version
    assert targets["remote"].unsupported == "a remote server (no package to install)"
    assert "no npm or PyPI registry package" in (targets["image"].unsupported or "")


def test_a_client_config_entry_is_not_scanned_as_another_package_than_it_runs(tmp_path: Path) -> None:
    """An npm alias runs the package after `npm:`, not the alias's name; an entry that installs two packages, or
    fetches from another index, is not one registry package: scanning the first name was vetting something else."""
    config = {"mcpServers": {
        "alias": {"command": "npx", "args": ["-y", "mcp-server-memory@npm:mcp-server-memroy@1.0.0"]},
        "two": {"command": "uvx", "args": ["--with", "other-plugin==1.0", "mcp-server-time==0.6.2"]},
        "index": {"command": "uvx", "args": ["--extra-index-url", "https://pypi.example.invalid/simple",
                                             "mcp-server-time==0.6.2"]},
        "registry": {"command": "npx", "args": ["--registry=https://npm.example.invalid/", "-y", "srv@1.0.0"]},
    }}
    targets = {t.origin: t for t in read_input(_write(tmp_path, "claude_desktop_config.json", config))}
    assert (targets["alias"].target, targets["alias"].unsupported) == ("npm:mcp-server-memroy@1.0.0", None)
    assert "installs 2 packages" in (targets["two"].unsupported or "")
    assert "`uvx --extra-index-url` fetches from another index" in (targets["index"].unsupported or "")
    assert "`npx --registry` fetches from another index" in (targets["registry"].unsupported or "")


@pytest.mark.parametrize(("content", "message"), [
    ("", "names no target"),
    ("# only comments\n", "names no target"),
    ("{not json", "is not valid JSON"),
    ('{"something": 1}', "no MCP servers found"),
    ('[1, 2]', "registry export entry 0 is not a JSON object"),
])
def test_bad_input_is_one_line_and_exit_2(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                          capsys: pytest.CaptureFixture[str], content: str, message: str) -> None:
    path = _write(tmp_path, "input", content)
    code, output = run_cli(monkeypatch, capsys, "batch", path, "--out", tmp_path / "out")
    assert code == 2
    assert output.startswith("error: ") and message in output
    assert "Traceback" not in output
    assert not (tmp_path / "out").exists()  # nothing was created for input that stops the batch


def test_a_missing_input_and_an_out_that_is_a_file_are_exit_2(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                              capsys: pytest.CaptureFixture[str]) -> None:
    code, output = run_cli(monkeypatch, capsys, "batch", tmp_path / "nope.txt", "--out", tmp_path / "out")
    assert code == 2 and "no such file" in output
    path = _write(tmp_path, "t.txt", "npm:fine\n")
    code, output = run_cli(monkeypatch, capsys, "batch", path, "--out", path)
    assert code == 2 and "is a file; give a directory" in output


def test_the_key_is_the_same_for_the_same_target_command_and_arguments() -> None:
    assert BatchTarget("npm:x", "c", ("a",)).key == BatchTarget("npm:x", "c", ("a",), origin="elsewhere").key
    assert BatchTarget("npm:x", "c", ("a",)).key != BatchTarget("npm:x", "c", ("b",)).key


def test_a_path_under_an_unknown_user_s_home_is_exit_2_naming_its_line(tmp_path: Path) -> None:
    """`~nosuchuser/server` made pathlib raise RuntimeError: an internal error (exit 3), not the line's own."""
    path = tmp_path / "targets.txt"
    path.write_text("npm:left-pad@1.3.0\n~nosuchuser-mcp-sandbox/server\n")
    with pytest.raises(UsageError, match=r"targets.txt:2: '~nosuchuser-mcp-sandbox/server': no such user's home"):
        read_input(path)


@pytest.mark.parametrize("since", ["t.txt", "other.db"])
def test_a_since_that_is_not_a_batch_store_is_exit_2_before_any_scan(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                                    capsys: pytest.CaptureFixture[str],
                                                                    since: str) -> None:
    """It was read only after each target's scan: every target failed (exit 3) after the whole batch had run."""
    import sqlite3

    path = _write(tmp_path, "t.txt", "npm:fine\n")
    sqlite3.connect(tmp_path / "other.db").execute("CREATE TABLE unrelated (a)").connection.close()
    code, output = run_cli(monkeypatch, capsys, "batch", path, "--out", tmp_path / "out", "--since", tmp_path / since)
    assert code == 2 and output.startswith(f"error: --since {tmp_path / since}: not a batch store (")
    assert not (tmp_path / "out").exists()


@pytest.mark.parametrize("given", [".", "/dev/null"])
def test_an_input_that_is_not_a_regular_file_is_named_so(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                         capsys: pytest.CaptureFixture[str], given: str) -> None:
    code, output = run_cli(monkeypatch, capsys, "batch", given, "--out", tmp_path / "out")
    assert code == 2 and output.startswith(f"error: {given}: not a regular file (a folder, a pipe or a device);")
