"""Issue 14 §1-2, without Docker: every launch-command shape mapped to its target (or refused with what to pass
instead), the `scan` grammar that tells a launch command from `TARGET -- ARGS`, bare-name hints, and a client
config's entries mapped to targets."""

from __future__ import annotations

from contextlib import nullcontext

import json
import subprocess
import sys
from pathlib import Path

import pytest

from scanner.errors import UsageError
from scanner.pipeline.config_doors import SSE_NOT_SCANNED, plan_servers
from scanner.pipeline.doors import NotMapped, launch_origin, launch_words, map_launch, with_launch
from scanner.pipeline.targets import parse_target
from scanner.provenance.client_config import read_client_config
from scanner.provenance.config_lint import lint_config
from scanner.report.model import Report, TargetInfo
from scanner.report.terminal import render

REPO = Path(__file__).resolve().parent.parent
ZOO = REPO / "tests" / "servers" / "zoo"


# --- launch commands that map ----------------------------------------------------------------------------------------

@pytest.mark.parametrize(("argv", "target", "command", "args"), [
    (["npx", "-y", "@scope/pkg@1.2.3", "--stdio", "/data"], "npm:@scope/pkg@1.2.3", None, ["--stdio", "/data"]),
    (["npx", "@modelcontextprotocol/server-memory"], "npm:@modelcontextprotocol/server-memory", None, []),
    (["npx", "-p", "@scope/pkg@2.0.0", "pkg-cli", "serve"], "npm:@scope/pkg@2.0.0", "pkg-cli", ["serve"]),
    (["pnpx", "srv@latest"], "npm:srv@latest", None, []),
    (["bunx", "--bun", "@a/b", "x"], "npm:@a/b", None, ["x"]),
    (["npm", "exec", "-y", "--", "@a/b@1.0.0", "--flag"], "npm:@a/b@1.0.0", None, ["--flag"]),
    (["npm", "exec", "--package=@a/b", "--", "b-cli", "x"], "npm:@a/b", "b-cli", ["x"]),
    (["pnpm", "dlx", "@a/b@3.1.0"], "npm:@a/b@3.1.0", None, []),
    (["yarn", "dlx", "srv"], "npm:srv", None, []),
    (["uvx", "mcp-server-time==2025.1", "--local-timezone", "UTC"], "pypi:mcp-server-time==2025.1", None,
     ["--local-timezone", "UTC"]),
    (["uvx", "mcp-server-time@2025.1"], "pypi:mcp-server-time==2025.1", None, []),
    (["uvx", "mcp-server-time"], "pypi:mcp-server-time", None, []),
    (["uvx", "--from", "mcp-server-git==1.2", "mcp-server-git", "-r", "."], "pypi:mcp-server-git==1.2",
     "mcp-server-git", ["-r", "."]),
    (["uvx", "--from", "mcp-server-x", "python", "-m", "mcp_server_x"], "pypi:mcp-server-x", "python",
     ["-m", "mcp_server_x"]),
    (["uv", "tool", "run", "mcp-server-git", "--repository", "."], "pypi:mcp-server-git", None,
     ["--repository", "."]),
    (["pipx", "run", "mcp-server-fetch==1.0.0"], "pypi:mcp-server-fetch==1.0.0", None, []),
    (["pipx", "run", "--spec", "mcp-server-fetch", "mcp-fetch", "--x"], "pypi:mcp-server-fetch", "mcp-fetch",
     ["--x"]),
    (["python", "-m", "mcp_server_time", "--x"], "pypi:mcp-server-time", "python -m mcp_server_time", ["--x"]),
    (["python3", "-u", "-m", "mcp_server_fetch.cli"], "pypi:mcp-server-fetch", "python -m mcp_server_fetch.cli",
     []),
    (["npx -y @scope/pkg@1.2.3 --stdio"], "npm:@scope/pkg@1.2.3", None, ["--stdio"]),  # pasted as one string
    (["npx -y @scope/pkg", "--extra"], "npm:@scope/pkg", None, ["--extra"]),  # pasted, then arguments
    (["sh", "-c", "exec npx -y @a/b arg"], "npm:@a/b", None, ["arg"]),
    (["env", "TOKEN=x", "uvx", "mcp-server-time"], "pypi:mcp-server-time", None, []),
    (["npx", "-y", "mcp-server-memory@npm:@scope/real@1.0.0"], "npm:@scope/real@1.0.0", None, []),  # an alias
    (["npx", "-f", "-y", "pkg"], "npm:pkg", None, []),  # npm's --force, not uv's --find-links
    (["uvx", "--python", "3.12", "--isolated", "mcp-server-time"], "pypi:mcp-server-time", None, []),
    (["uvx", "--python-platform", "x86_64-manylinux_2_28", "mcp-server-time"], "pypi:mcp-server-time", None, []),
])
def test_launch_commands_map_to_their_target(argv, target, command, args):
    mapping = map_launch(argv, REPO)
    assert (mapping.target, mapping.command, mapping.server_args) == (target, command, args)
    parse_target(mapping.target)  # what scan is then given is a target as the user could have typed it
    assert mapping.target in mapping.describe()


def test_a_local_package_folder_in_a_launch_command_maps_to_the_folder():
    mapping = map_launch(["uvx", "--from", "./tests/servers/zoo", "zoo-plain", "--x"], REPO)
    assert (mapping.target, mapping.command, mapping.server_args) == (str(ZOO), "zoo-plain", ["--x"])
    assert parse_target(mapping.target).kind == "folder"


def test_what_the_mapping_drops_or_assumes_is_noted():
    assert map_launch(["npx", "-y", "a"], REPO).notes == []
    wrapped = map_launch(["env", "TOKEN=x", "npx", "-y", "a"], REPO)
    assert "environment assignments are not passed" in wrapped.notes[0]
    env_file = map_launch(["uvx", "--env-file", "/nonexistent.invalid/.env", "mcp-server-time"], REPO)
    assert env_file.notes == ["`uvx --env-file` not read: its variables are not passed (use --env NAME=VALUE)"]
    module = map_launch(["python", "-m", "yaml_server"], REPO)
    assert "named after the module" in module.notes[0] and "pypi:NAME" in module.notes[0]


def test_the_mapping_line_never_prints_the_arguments():
    line = map_launch(["npx", "-y", "@a/b", "--token", "s3cr3t-value"], REPO).describe()
    assert "s3cr3t" not in line and "1" not in line.split("(")[0] and "2 server argument(s)" in line


# --- launch commands that are refused --------------------------------------------------------------------------------

@pytest.mark.parametrize(("argv", "expected"), [
    (["/usr/local/bin/my-server", "--token", "x"], "`my-server` is a program on this machine"),
    (["bash", "-c", "cd /srv && npx -y a"], "runs 2 programs"),
    (["bash", "start.sh"], "`bash` runs a shell script"),
    (["node", "./x.js"], "`node` runs a script on this machine, not a package"),
    (["python", "server.py"], "`python` runs a script on this machine"),
    (["docker", "run", "-i", "--rm", "-v", "/:/h", "mcp/time"], "has options the sandbox would not honour"),
    (["uv", "run", "server.py"], "`uv run` runs a project's own environment"),
    (["python", "-m", "http.server"], "runs a module of Python's standard library"),  # not the PyPI package `http`
    (["python3", "-m", "json.tool"], "runs a module of Python's standard library"),
    (["uvx", "--from", "git+https://github.com/o/r", "cmd"], "fetches from a git source"),
    (["npx", "-y", "https://example.invalid/p.tgz"], "fetches from a url source"),
    (["uvx", "mcp-server-time>=1"], "names a version range; give an exact version"),
    (["npx", "-y", "@a/b@^1.2"], "names a version range"),
    (["uvx", "mcp-server-x[all]"], "asks for extras"),
    (["uvx", "mcp-server-x==1.0; os_name == 'nt'"], "has an environment marker"),
    (["pipx", "run", "mcp-server-x@1.0"], "names no version pip reads"),  # not the newest release
    (["npx", "-p", "a", "-p", "b", "c"], "installs 2 packages"),
    (["uvx", "--with", "extra-plugin", "mcp-server-x"], "installs 2 packages"),
    (["uvx", "-w", "extra-plugin", "mcp-server-x"], "installs 2 packages"),  # not pypi:extra-plugin
    (["npx", "-c", "a --x"], "runs a shell string"),
    (["npx", "-y", "--registry", "https://npm.example.invalid/", "pkg@1.0.0"], "`npx --registry` fetches from"),
    (["npx", "-y", "--reg", "https://npm.example.invalid/", "pkg@1.0.0"], "`npx --reg` fetches from"),  # alias
    (["npx", "-y", "--registry=https://npm.example.invalid/", "pkg@1.0.0"], "`npx --registry` fetches from"),
    (["npx", "--@scope:registry=https://npm.example.invalid/", "@scope/pkg"], "`npx --@scope:registry` fetches"),
    (["pnpm", "dlx", "--userconfig", "/tmp/npmrc", "pkg"], "`pnpm dlx --userconfig` fetches from"),
    (["uvx", "--index-url", "https://pypi.example.invalid/simple", "mcp-server-time"], "`uvx --index-url` fetches"),
    (["uvx", "--extra-index-url=https://pypi.example.invalid/simple", "mcp-server-time"], "--extra-index-url"),
    (["uvx", "-i", "https://pypi.example.invalid/simple", "mcp-server-time"], "`uvx -i` fetches from"),
    (["uvx", "--index", "https://pypi.example.invalid/simple", "mcp-server-time"], "`uvx --index` fetches from"),
    (["uvx", "--default-index", "https://pypi.example.invalid/", "mcp-server-time"], "--default-index"),
    (["uv", "tool", "run", "-f", "https://pypi.example.invalid/", "mcp-server-time"], "`uv tool run -f` fetches"),
    (["uvx", "--config-file", "/tmp/uv.toml", "mcp-server-time"], "`uvx --config-file` fetches from"),
    (["pipx", "run", "--index-url", "https://pypi.example.invalid/simple", "pkg"], "`pipx run --index-url` fetch"),
    (["pipx", "run", "--pip-args=--extra-index-url https://pypi.example.invalid", "pkg"], "`pipx run --pip-args`"),
    (["uvx", "--with-requirements", "req.txt", "mcp-server-x"], "`uvx --with-requirements` can change what"),
    (["uvx", "--with-editable", "./plugin", "mcp-server-x"], "`uvx --with-editable` can change what"),
    (["uvx", "--overrides", "o.txt", "mcp-server-x"], "`uvx --overrides` can change what"),
    (["npx", "-y", "--tag", "beta", "pkg"], "`npx --tag` can change what"),  # pkg@beta, not the latest vetted
    (["npx", "-y", "--before", "2020-01-01", "pkg"], "`npx --before` can change what"),
    (["uvx", "--exclude-newer", "2020-01-01", "mcp-server-x"], "`uvx --exclude-newer` can change what"),
    (["uvx", "--prerelease", "allow", "mcp-server-x"], "`uvx --prerelease` can change what"),
    (["uvx", "--resolution", "lowest", "mcp-server-x"], "`uvx --resolution` can change what"),
    (["uvx", "-c", "c.txt", "mcp-server-x"], "`uvx -c` can change what"),
    (["npx", "-y"], "names no package"),
    (["uvx", "--from", "mcp-server-x"], "names a package but no program"),
    (["npx", "-y", "./missing-folder"], "names a local package that does not exist"),
    (["npx", "-y", "Not_Valid"], "which is not a target"),
    (["npx 'unclosed"], "cannot be split into shell words"),
    ([""], "is empty"),
])
def test_launch_commands_that_name_no_installable_package_are_refused(argv, expected):
    with pytest.raises(NotMapped) as caught:
        map_launch(argv, REPO)
    message = str(caught.value)
    assert message.startswith("launch command not mapped: ") and expected in message
    assert "\n" not in message and "--token" not in message
    assert isinstance(caught.value, UsageError)  # the CLI's exit 2 with one line


# --- the scan grammar: launch command or TARGET -- ARGS --------------------------------------------------------------

@pytest.mark.parametrize(("target", "server_args", "tail", "words"), [
    ("npx", ["-y", "pkg"], ["npx", "-y", "pkg"], ["npx", "-y", "pkg"]),  # scan -- npx -y pkg
    ("npm:x", ["stdio"], ["stdio"], None),  # scan npm:x -- stdio: as before
    ("npm:x", ["stdio"], None, None),  # scan npm:x stdio
    ("npm:x", [], None, None),
    ("npx", ["npx"], ["npx"], None),  # scan npx -- npx: a TARGET came first
    ("npx -y pkg", [], None, ["npx -y pkg"]),  # pasted
    ("npx -y pkg", ["--x"], ["--x"], ["npx -y pkg", "--x"]),  # pasted, then -- server arguments
    (None, [], None, None),
    (None, [], [], None),  # scan --: nothing after it
])
def test_launch_words_tell_a_launch_command_from_a_target_and_its_arguments(target, server_args, tail, words):
    assert launch_words(target, server_args, tail) == words


def test_a_folder_path_with_a_space_is_a_target_not_a_pasted_command(tmp_path):
    folder = tmp_path / "my server"
    folder.mkdir()
    assert launch_words(str(folder), [], None) is None


@pytest.mark.parametrize(("text", "hint"), [
    ("@scope/name", "did you mean npm:@scope/name?"),
    ("@scope/name@1.2.3", "did you mean npm:@scope/name@1.2.3?"),
    ("name@1.2.3", "did you mean npm:name@1.2.3?"),
    ("mcp-server-time==2025.1", "did you mean pypi:mcp-server-time==2025.1?"),
    ("name", "did you mean npm:name or pypi:name?"),
    ("Mixed_Case", "did you mean pypi:Mixed_Case?"),
    ("npx", "put it after --: mcp-sandbox scan -- npx"),
])
def test_a_bare_name_gets_a_did_you_mean(text, hint):
    with pytest.raises(UsageError, match="neither a registry target nor an existing path") as caught:
        parse_target(text)
    assert hint in str(caught.value)


def test_a_missing_path_gets_no_registry_hint():
    with pytest.raises(UsageError) as caught:
        parse_target("./no/such/path")
    assert "did you mean" not in str(caught.value)


# --- the report says what it was mapped from -------------------------------------------------------------------------

def test_the_report_names_the_launch_command_it_was_mapped_from():
    from rich.console import Console

    mapping = map_launch(["npx", "-y", "@a/b@1.0.0"], REPO)
    report = Report(target=TargetInfo(kind="npm", name="@a/b", requested=mapping.target, ecosystem="npm"))
    assert report.target.launch is None
    mapped = with_launch(report, launch_origin(mapping, config_server="memory"))
    assert mapped.target.launch is not None
    assert (mapped.target.launch.runner, mapped.target.launch.package) == ("npx", "@a/b@1.0.0")
    assert json.loads(mapped.model_dump_json())["target"]["launch"]["config_server"] == "memory"
    console = Console(record=True, width=200)
    render(mapped, console, "info")
    assert "mapped from  npx @a/b@1.0.0" in console.export_text()


def _node_package(root: Path) -> Path:
    (root / "dist").mkdir(parents=True)
    (root / "package.json").write_text('{"name": "local-node-srv", "version": "1.0.0"}')
    (root / "dist" / "index.js").write_text("console.log('hi')\n")
    return root


def test_a_script_inside_a_package_folder_maps_to_that_folder(tmp_path):
    package = _node_package(tmp_path / "srv")
    (package / "server.py").write_text("print('hi')\n")
    mapping = map_launch(["node", "--no-warnings", "srv/dist/index.js", "--stdio"], tmp_path)
    assert (mapping.target, mapping.runner, mapping.server_args) == (str(package), "node", ["--stdio"])
    assert mapping.command == "node --no-warnings /opt/src/pkg/dist/index.js"  # its copy in the sandbox
    assert "runs from the package folder's copy in the sandbox" in mapping.notes[0]
    with pytest.raises(NotMapped, match="scan the package folder that holds it"):
        map_launch(["python3", "srv/server.py"], tmp_path)  # a Python script, but the folder is an npm package
    (tmp_path / "loose.js").write_text("")
    with pytest.raises(NotMapped, match="scan the package folder that holds it"):
        map_launch(["node", "./loose.js"], tmp_path)  # no package holds it: refused, as before


def test_a_runner_options_value_is_not_taken_for_the_script(tmp_path):
    """`node -r ./preload.js dist/index.js`: the preload is -r's value, the script is dist/index.js (the preload was
    taken for the script, and the server's real entry passed to it as an argument)."""
    package = _node_package(tmp_path / "srv")
    (package / "preload.js").write_text("")
    mapping = map_launch(["node", "-r", "srv/preload.js", "srv/dist/index.js", "--stdio"], tmp_path)
    assert mapping.command == "node -r srv/preload.js /opt/src/pkg/dist/index.js" and mapping.server_args == ["--stdio"]
    with pytest.raises(NotMapped):
        map_launch(["node", "-e", "srv/dist/index.js"], tmp_path)  # inline code, whatever it looks like
    near = map_launch(["node", "--no-warnings", "srv/preload.js"], tmp_path)  # a flag without a value: as before
    assert near.command == "node --no-warnings /opt/src/pkg/preload.js"


def test_a_folder_target_then_a_script_in_it_is_that_script(tmp_path, monkeypatch):
    from scanner.pipeline.doors import folder_script

    package = _node_package(tmp_path / "pkg")
    monkeypatch.chdir(tmp_path)
    for args in (["node", "dist/index.js", "--x"], ["node", "pkg/dist/index.js", "--x"]):
        mapping = folder_script("./pkg", args)
        assert (mapping.target, mapping.command, mapping.server_args) == (
            str(package), "node /opt/src/pkg/dist/index.js", ["--x"])
    assert folder_script("./pkg", ["--stdio", "x"]) is None  # the server's own arguments, as before
    assert folder_script("./pkg", ["node", "missing.js"]) is None
    assert folder_script("npm:x", ["node", "dist/index.js"]) is None


# --- client configs → targets ----------------------------------------------------------------------------------------

def _config(tmp_path: Path, data: dict, name: str = ".mcp.json") -> Path:
    path = tmp_path / name
    path.write_text(json.dumps(data))
    return path


def test_every_config_entry_maps_to_a_target_or_says_why_not(tmp_path):
    (tmp_path / "pkg").mkdir()
    (tmp_path / "pkg" / "pyproject.toml").write_text('[project]\nname = "local-srv"\n')
    path = _config(tmp_path, {"mcpServers": {
        "memory": {"command": "npx", "args": ["-y", "@modelcontextprotocol/server-memory"], "env": {"K": "v1"}},
        "time": {"command": "uvx", "args": ["mcp-server-time==2025.1", "--local-timezone", "UTC"]},
        "local": {"command": "uvx", "args": ["--from", "./pkg", "local-srv"]},  # relative to the config's folder
        "binary": {"command": "/opt/bin/server"},
        "remote": {"url": "https://mcp.example.invalid/mcp?token=x", "headers": {"Authorization": "Bearer s3cr"}},
        "events": {"type": "sse", "url": "https://mcp.example.invalid/sse"},
        "broken": {"command": "npx", "args": "-y x"},
    }})
    planned = {p.name: p for p in plan_servers(read_client_config(path), [], pass_env=False)}
    assert planned["memory"].mapping.target == "npm:@modelcontextprotocol/server-memory"
    assert planned["time"].mapping.server_args == ["--local-timezone", "UTC"]
    assert planned["local"].mapping.target == str(tmp_path / "pkg")
    assert "program on this machine" in planned["binary"].not_scanned and planned["binary"].mapping is None
    remote = planned["remote"]
    assert remote.not_scanned is None and remote.remote.origin() == "https://mcp.example.invalid"
    assert remote.remote.secrets == {} and remote.headers_not_passed == ["Authorization"]  # not without the flag
    assert (planned["events"].not_scanned, planned["events"].transport) == (SSE_NOT_SCANNED, "sse")
    assert "unreadable entry" in planned["broken"].not_scanned
    assert planned["memory"].env == {} and planned["memory"].env_not_passed == ["K"]


def test_config_env_values_pass_only_when_asked(tmp_path):
    path = _config(tmp_path, {"mcpServers": {"s": {"command": "npx", "args": ["a"],
                                                   "env": {"API_KEY": "k3y-v4lue", "PORT": 8080, "PATH": "/evil"}}}})
    assert read_client_config(path).servers[0].env == {}  # never read unless asked
    [planned] = plan_servers(read_client_config(path, keep_env=True), [], pass_env=True)
    assert planned.env == {"API_KEY": "k3y-v4lue", "PORT": "8080"}  # PATH is the sandbox's own
    assert planned.env_not_passed == ["PATH"]
    assert "k3y-v4lue" not in repr(planned)


def test_a_config_env_name_or_value_no_process_can_carry_is_not_passed(tmp_path):
    """`"HOME=/tmp/x": ""` became the variable HOME (the engine splits at the first `=`), past the rule that the
    sandbox's PATH and HOME are its own; a NUL failed the run as an internal error. Neither is passed now, said."""
    path = _config(tmp_path, {"mcpServers": {"s": {"command": "npx", "args": ["a"], "env": {
        "HOME=/tmp/elsewhere": "", "PATH=/tmp/bin:/usr/bin": "", "": "x", "NUL": "a\u0000b", "OK": "v"}}}})
    [planned] = plan_servers(read_client_config(path, keep_env=True), [], pass_env=True)
    assert planned.env == {"OK": "v"}
    assert sorted(planned.env_not_passed) == sorted(["HOME=/tmp/elsewhere", "PATH=/tmp/bin:/usr/bin", "", "NUL"])
    assert sum("is no environment variable name" in note for note in planned.notes) == 3
    assert sum("holds a NUL character" in note for note in planned.notes) == 1


def test_a_remote_entrys_headers_pass_only_when_asked_and_only_as_secrets(tmp_path):
    path = _config(tmp_path, {"mcpServers": {
        "remote": {"type": "http", "url": "https://mcp.example.invalid/mcp", "headers": {"X-Key": "k3y"}},
        "plain": {"url": "http://mcp.example.invalid/mcp", "headers": {"X-Key": "k3y"}},
        "asks": {"url": "https://mcp.example.invalid/mcp", "headers": {"X-Key": "${input:api-key}"}}}})
    planned = {p.name: p for p in plan_servers(read_client_config(path, keep_env=True), [], pass_env=True)}
    assert planned["remote"].remote.secrets == {"X-Key": "k3y"} and planned["remote"].remote.headers == {}
    assert "k3y" not in repr(planned["remote"])
    assert planned["plain"].remote is None and "plain http://" in planned["plain"].not_scanned
    assert planned["asks"].remote.secrets == {} and planned["asks"].headers_not_passed == ["X-Key"]
    assert planned["asks"].notes == ["header X-Key not passed: its value names a client variable (${input:api-key}), "
                                     "which is not read"]


def test_cwd_env_file_and_client_variables_are_read_or_said_per_entry(tmp_path):
    (tmp_path / "srv").mkdir()
    (tmp_path / "srv" / "pyproject.toml").write_text('[project]\nname = "local-srv"\n')
    (tmp_path / ".vscode").mkdir()
    path = _config(tmp_path, {"servers": {
        "here": {"command": "uvx", "args": ["--from", ".", "local-srv"], "cwd": "${workspaceFolder}/srv"},
        "gone": {"command": "npx", "args": ["-y", "@a/b", "--token", "${input:token}"], "cwd": "/no/such/dir",
                 "envFile": "${workspaceFolder}/.env", "env": {"K": "${input:k}", "L": "plain"}}}},
        ".vscode/mcp.json")
    planned = {p.name: p for p in plan_servers(read_client_config(path, keep_env=True), [], pass_env=True)}
    assert planned["here"].mapping.target == str(tmp_path / "srv")  # `.` read from the entry's cwd
    assert "read for the command's relative paths" in planned["here"].notes[0]
    gone = planned["gone"]
    assert gone.mapping.server_args == ["--token", "${input:token}"] and gone.env == {"L": "plain"}
    assert gone.env_not_passed == ["K"]
    notes = "\n".join(gone.notes)
    for said in ("envFile not read", "not read: ${input:token} in args", "env K not passed", "cwd /no/such/dir not "
                 "applied (no such folder here)"):
        assert said in notes


def test_server_names_select_entries_and_an_unknown_one_is_refused(tmp_path):
    path = _config(tmp_path, {"projects": {str(tmp_path): {"mcpServers": {"a": {"command": "npx", "args": ["x"]}}}},
                              "mcpServers": {"b": {"command": "npx", "args": ["y"]}}}, ".claude.json")
    config = read_client_config(path)
    assert [p.name for p in plan_servers(config, ["a"], False)] == ["a"]
    assert plan_servers(config, ["a"], False)[0].label == f"a [{tmp_path}]"
    with pytest.raises(UsageError, match="has no such server; it has: a, b"):
        plan_servers(config, ["c"], False)


@pytest.mark.parametrize("shape", [
    {"servers": {"s": {"type": "stdio", "command": "npx", "args": ["-y", "@a/b"]}}},  # VS Code mcp.json
    {"mcp": {"servers": {"s": {"command": "npx", "args": ["-y", "@a/b"]}}}},  # VS Code settings.json
    {"mcpServers": {"s": {"command": "npx", "args": ["-y", "@a/b"]}}},  # Claude Desktop, Cursor, .mcp.json
])
def test_each_client_shape_maps(tmp_path, shape):
    [planned] = plan_servers(read_client_config(_config(tmp_path, shape, "mcp.json")), [], False)
    assert planned.mapping is not None and planned.mapping.target == "npm:@a/b"


def test_check_config_says_not_checked_for_a_launch_it_cannot_read(tmp_path):
    path = _config(tmp_path, {"mcpServers": {"bin": {"command": "/opt/my-server", "args": ["--token", "t0ken"]},
                                             "npx": {"command": "npx", "args": ["-y", "a@1.0.0"]}}})
    servers = {s.name: s for s in lint_config(read_client_config(path)).servers}
    assert servers["bin"].not_checked is not None and "`my-server` is no package runner" in servers["bin"].not_checked
    assert "t0ken" not in servers["bin"].not_checked
    assert servers["npx"].not_checked is None and servers["npx"].runner == "npx"


# --- the command line: exit 2 with one line, no traceback ------------------------------------------------------------

def _cli(*args: str, cwd: Path = REPO) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "scanner", *args], capture_output=True, text=True, cwd=cwd,
                          timeout=120)


@pytest.mark.parametrize(("args", "expected"), [
    (["scan"], "give a TARGET"),
    (["scan", "@scope/name"], "did you mean npm:@scope/name?"),
    (["scan", "npx"], "put it after --"),
    (["scan", "--", "bash", "-c", "cd x && npx y"], "runs 2 programs"),
    (["scan", "--", "node", "./x.js"], "scan the package folder that holds it"),
    (["scan", "--", "docker", "run", "-p", "80:80", "mcp/time"], "scan the image itself: mcp-sandbox scan docker:"),
    (["scan", "uvx --from git+https://example.invalid/r.git srv"], "fetches from a git source"),
    (["scan", "--command", "x", "--", "npx", "-p", "a", "a-cli"], "drop --command"),
    (["scan", "--server", "x"], "go with --config-file"),
    (["scan", "--config-file", "no-such.json"], "no such file"),
])
def test_scan_refuses_bad_doors_with_exit_2_and_one_line(args, expected):
    result = _cli(*args)
    assert result.returncode == 2, result.stderr
    assert expected in result.stderr and result.stderr.strip().count("\n") == 0, result.stderr
    assert "Traceback" not in result.stderr


def test_scan_config_flags_that_take_one_report_are_refused(tmp_path):
    path = _config(tmp_path, {"mcpServers": {"a": {"command": "npx", "args": ["-y", "a"]}}})
    for extra, expected in ((["--lock", str(tmp_path / "l.lock")], "--lock and --sign take one server"),
                            (["--sarif", "-"], "one JSON document"), (["npm:a"], "give no TARGET"),
                            (["--", "npx", "a"], "give no TARGET"),
                            (["--url", "https://mcp.example.invalid/mcp"], "drop --url")):
        result = _cli("scan", "--config-file", str(path), *extra)
        assert result.returncode == 2 and expected in result.stderr, result.stderr
        assert result.stderr.strip().count("\n") == 0


def test_scan_config_lists_what_it_cannot_scan_and_exits_3(tmp_path):
    """No Docker needed: neither entry reaches a sandbox, and the run says so (exit 3, never a silent pass)."""
    path = _config(tmp_path, {"mcpServers": {"bin": {"command": "my-server", "env": {"SECRET": "v4lue"}},
                                             "events": {"type": "sse", "url": "https://mcp.example.invalid/sse"}}})
    out = tmp_path / "servers.json"
    result = _cli("scan", "--config-file", str(path), "--json", str(out))
    assert result.returncode == 3, result.stderr
    assert "not scanned: SSE transport" in result.stdout
    assert result.stderr.strip().splitlines()[-1].startswith("exit 3: 2 server(s); worst: bin: not scanned")
    document = json.loads(out.read_text())
    assert [(s["name"], s["status"], s["transport"], s["report"]) for s in document["servers"]] == [
        ("bin", "not scanned", "stdio", None), ("events", "not scanned", "sse", None)]
    assert document["servers"][0]["env_not_passed"] == ["SECRET"]
    assert "v4lue" not in out.read_text() + result.stdout + result.stderr


# --- the grammar as typer parses it: what `scan` hands the scan ------------------------------------------------------

@pytest.mark.parametrize(("args", "target", "server_args", "command"), [
    (["npm:x", "--", "stdio"], "npm:x", ["stdio"], None),  # as before: TARGET, then the server's arguments
    (["npm:x", "stdio"], "npm:x", ["stdio"], None),
    (["--network", "none", "npm:x", "--", "-y", "--flag"], "npm:x", ["-y", "--flag"], None),
    (["--", "npx", "-y", "@a/b@1.0.0", "--x"], "npm:@a/b@1.0.0", ["--x"], None),
    (["--network", "none", "--", "uvx", "--from", "pkg==1.0", "pkg-cli", "-v"], "pypi:pkg==1.0", ["-v"], "pkg-cli"),
    (["npx -y @a/b", "--", "--x"], "npm:@a/b", ["--x"], None),  # pasted, then -- server arguments
    (["tests/servers/zoo", "--", "python", "mcp_zoo/servers.py", "-v"], str(ZOO), ["-v"],
     "python /opt/src/pkg/mcp_zoo/servers.py"),  # a folder target, then a script inside it
    (["--command", "srv --stdio", "--", "npx", "-y", "@a/b"], "npm:@a/b", [], "srv --stdio"),
])
def test_scan_hands_the_scan_the_mapped_target_and_arguments(monkeypatch, args, target, server_args, command):
    """The scan itself is replaced by a recorder: this is the argument grammar, not the sandbox."""
    from typer.testing import CliRunner

    from scanner.cli import scan as scan_cli
    from scanner.cli.app import app

    seen = []

    def record(options, early=None):
        seen.append(options)
        return Report(target=TargetInfo(kind="npm", name="x", requested=options.target), status="complete")

    monkeypatch.setattr(scan_cli, "_run", record)
    monkeypatch.setattr(scan_cli, "_head_start", lambda *a, **k: nullcontext())  # no engine work: no scan runs
    monkeypatch.chdir(REPO)
    result = CliRunner().invoke(app, ["scan", "--quiet", *args])
    assert result.exit_code == 0, result.output
    [options] = seen
    assert (options.target, options.server_args, options.command) == (target, server_args, command)


@pytest.mark.parametrize("text", ["./" + "a" * 5_000, "b/" * 3_000])
def test_a_target_too_long_to_name_a_path_is_a_usage_error_of_bounded_length(text):
    """`Path.exists` raises ENAMETOOLONG (not False) for such a name: it ended in exit 3 'internal error'."""
    with pytest.raises(UsageError, match="neither a registry target nor an existing path") as caught:
        parse_target(text)
    assert len(str(caught.value)) < 700


def test_a_plugin_folder_check_of_a_name_too_long_is_no_plugin():
    from scanner.plugins.folder import is_plugin_folder

    assert is_plugin_folder(Path("npm:pkg@" + "1" * 5_000)) is False


@pytest.mark.parametrize(("argv", "unpinned"), [
    (["npx", "-y", "@modelcontextprotocol/server-memory"], "has no exact version (none given)"),
    (["npx", "-y", "pkg@latest"], "(a range or tag: 'latest')"),
    (["uvx", "mcp-server-time"], "has no exact version (none given)"),
    (["npx", "-y", "pkg@1.2.3"], None), (["uvx", "mcp-server-time==2025.1.1"], None),
    (["uvx", "--from", "./tests/servers/zoo", "zoo-plain"], None)])
def test_a_launch_command_that_fetches_the_newest_version_each_start_carries_i1(argv, unpinned):
    """The scan vets one version; an unpinned command starts whatever is newest at each start (check-config's I1)."""
    findings = map_launch(argv, REPO).findings
    if unpinned is None:
        assert findings == ()
    else:
        assert [f.rule_id for f in findings] == ["I1"] and unpinned in findings[0].message


def test_the_launch_findings_reach_the_report_and_the_verdict():
    from scanner.pipeline.assemble import ScanParts, assemble
    from scanner.config import Config
    from scanner.report.model import TargetInfo

    [i1] = map_launch(["npx", "-y", "pkg"], REPO).findings
    report = assemble(ScanParts(target=TargetInfo(kind="npm", name="pkg", requested="npm:pkg"), launch=[i1]), Config())
    assert [f.rule_id for f in report.findings] == ["I1"]
    assert report.verdict in ("review", "incomplete")
    report = assemble(ScanParts(target=TargetInfo(kind="npm", name="pkg", requested="npm:pkg"), launch=[i1]),
                      Config(disabled=frozenset({"I1"}), explicit=True))
    assert report.findings == [] and [f.rule_id for f in report.suppressed] == ["I1"]  # a config disables it alike


def test_scan_and_a_config_scan_hand_the_launch_findings_to_the_scan():
    from scanner.cli.scan_door import _mapped
    from scanner.pipeline.scan_options import ScanOptions

    mapping = map_launch(["npx", "-y", "pkg"], REPO)
    assert _mapped(ScanOptions(target=""), mapping).launch_findings == mapping.findings != ()
    assert _mapped(ScanOptions(target=""), map_launch(["npx", "-y", "pkg@1.0.0"], REPO)).launch_findings == ()


def test_a_config_entry_hands_its_launch_findings_to_its_scan():
    from scanner.cli.output import ReportOutputs
    from scanner.cli.scan_config import _scan_one
    from scanner.pipeline.config_doors import PlannedServer
    from scanner.pipeline.scan_options import ScanOptions
    from scanner.report.model import Report, TargetInfo

    given: list[ScanOptions] = []

    def run(options: ScanOptions) -> Report:
        given.append(options)
        return Report(target=TargetInfo(kind="npm", name="pkg", requested=options.target))

    server = PlannedServer(name="memory", mapping=map_launch(["npx", "-y", "pkg"], REPO))
    outcome = _scan_one(server, ScanOptions(target=""), ReportOutputs(), None, run)
    assert outcome.report is not None and [f.rule_id for f in given[0].launch_findings] == ["I1"]
