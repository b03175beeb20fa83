"""Which of a plugin's declared servers the sandbox runs, and as what: a `./` command bundled in the plugin is the
local package folder that holds it (its entry point the program, ${PLUGIN_ROOT}/${PLUGIN_DATA} in its arguments
expanded to their sandbox paths: scanner.plugins.variables), an npx/uvx/… launcher the registry target it names
(scanner.pipeline.doors), a streamable-http entry the `--url` target (NOT sandboxed; its headers are not sent, their
names are listed), and everything else one line saying why it is not scanned (a compiled executable, an SSE entry,
an entry a conformant client rejects). Pure: reads the plugin folder only."""

from __future__ import annotations

import json
import tomllib
from dataclasses import replace
from pathlib import Path

from sandbox.core.untrusted import escape_for_terminal
from scanner.errors import UsageError
from scanner.pipeline.config_doors import SSE_NOT_SCANNED, PlannedServer
from scanner.pipeline.doors import PYTHON, SCRIPT_RUNNERS, SHELLS, LaunchMapping, NotMapped, map_launch, map_script
from scanner.pipeline.image_target import IMAGE_PREFIX, names_a_local_host, names_a_local_registry
from scanner.pipeline.remote_target import config_remote
from scanner.pipeline.targets import parse_target
from scanner.plugins.containment import ROOT_VAR, inside
from scanner.plugins.model import DeclaredServer, EnvelopeResult
from scanner.plugins.variables import cwd_note, expand_bundled, registry_note
from scanner.provenance.launch_runners import runner_call
from scanner.provenance.shell_words import program_name

COMPILED = "not auditable: compiled executable"
MAGIC = (b"\x7fELF", b"MZ", b"\xfe\xed\xfa\xce", b"\xfe\xed\xfa\xcf", b"\xce\xfa\xed\xfe", b"\xcf\xfa\xed\xfe",
         b"\xca\xfe\xba\xbe")
MANIFESTS = ("pyproject.toml", "package.json")


def plan_plugin(result: EnvelopeResult) -> list[PlannedServer]:
    return [plan_server(result, server) for server in result.servers]


def plan_server(result: EnvelopeResult, server: DeclaredServer) -> PlannedServer:
    planned = PlannedServer(name=server.name, env_not_passed=list(server.env_names))
    rejected = sorted({f.rule_id for f in result.rejected(server.name)})
    if rejected:
        planned.not_scanned = f"not loaded: a conformant client rejects this entry ({', '.join(rejected)})"
    elif server.transport == "sse":
        planned.transport, planned.not_scanned = "sse", SSE_NOT_SCANNED
    elif server.transport == "streamable-http":
        _remote(server, planned)
    elif server.transport != "stdio" or not server.command:
        planned.not_scanned = "no command to launch"
    elif server.command.startswith("./"):
        _bundled(result.root, server, planned)
    else:
        _launcher(result.root, server, planned)
    if planned.mapping is not None:  # said on stderr and recorded in the report's target.launch
        planned.mapping.notes.extend(cwd_note(server.cwd))
        if planned.mapping.runner != "plugin":
            planned.mapping.notes.extend(registry_note(server.args))
    return planned


def _remote(server: DeclaredServer, planned: PlannedServer) -> None:
    planned.transport, planned.headers_not_passed = "streamable-http", list(server.header_names)
    try:
        remote = config_remote(server.url or "", {})
    except UsageError as exc:
        planned.not_scanned = f"remote entry not scanned: {exc}"
        return
    if names_a_local_host(remote.host):
        planned.not_scanned = ("remote entry not scanned: its URL names this machine or its private network "
                               "(localhost, a loopback, private or link-local address): the scan's requests and tool "
                               "calls would go there for the plugin; scan the server with --url if it is yours")
        return
    planned.remote = remote


def _launcher(root: Path, server: DeclaredServer, planned: PlannedServer) -> None:
    argv = [server.command or "", *server.args]
    if _script(root, server, planned):
        return
    try:
        mapping = map_launch(argv, root)
    except NotMapped as exc:
        prog = program_name(argv[0])
        script = prog in SCRIPT_RUNNERS | SHELLS | {"docker", "podman", "uv"} or PYTHON.fullmatch(prog)
        if runner_call(argv) is None and not script:
            planned.not_scanned = (f"{COMPILED} (`{escape_for_terminal(prog, 80)}` is a program on the user's "
                                   "machine, not a package the sandbox can install)")
        else:
            planned.not_scanned = str(exc)
        return
    if _outside(root, mapping.target):
        planned.not_scanned = (f"`{escape_for_terminal(program_name(argv[0]), 80)}` names a local package outside the "
                               "plugin folder: a plugin's server runs only what the plugin bundles or a registry "
                               "package (the user's own folders are not copied into the sandbox)")
        return
    if target_names_local_registry(mapping.target):
        planned.not_scanned = ("its image is to be pulled from a registry on this machine or its private network: "
                               "scanning it would have the engine send requests there for the plugin; pull the image "
                               "yourself and scan docker:IMAGE")
        return
    planned.mapping = mapping


def target_names_local_registry(target: str) -> bool:
    """A docker: target whose image name begins with a loopback, private or link-local registry host."""
    return target.startswith(IMAGE_PREFIX) and names_a_local_registry(target[len(IMAGE_PREFIX):].partition("@")[0])


def _outside(root: Path, target: str) -> bool:
    """A mapped target that is a local folder or archive (not npm:, pypi: or docker:) outside the plugin folder."""
    if target.startswith(("npm:", "pypi:", IMAGE_PREFIX)):
        return False
    return not inside(root, Path(target))


def _script(root: Path, server: DeclaredServer, planned: PlannedServer) -> bool:
    """`node ${PLUGIN_ROOT}/server/index.js` (or python): a script in a package folder of the plugin runs from that
    folder's copy in the sandbox, the rest of its arguments expanded as a bundled server's are."""
    host = [arg.replace(ROOT_VAR, str(root.resolve())) for arg in server.args]
    mapping = map_script(program_name(server.command or ""), host, root)
    if mapping is None or not inside(root, Path(mapping.target)):
        return False
    rest = server.args[len(server.args) - len(mapping.server_args):]
    expanded = expand_bundled(rest, root, Path(mapping.target))
    planned.env = expanded.env
    planned.mapping = replace(mapping, runner="plugin", server_args=expanded.args,
                              notes=[*mapping.notes, *expanded.notes])
    return True


def _bundled(root: Path, server: DeclaredServer, planned: PlannedServer) -> None:
    command = server.command or ""
    shown = escape_for_terminal(command, 200)
    path = root / command
    if not inside(root, path) or not path.is_file():
        planned.not_scanned = f"the bundled command {shown} is no file in the plugin: the server cannot start as packaged"
        return
    with path.open("rb") as handle:
        if handle.read(4).startswith(MAGIC):
            planned.not_scanned = f"{COMPILED} ({shown})"
            return
    package = _package_folder(root, path.resolve().parent)
    if package is None:
        planned.not_scanned = (f"not auditable yet: no package folder (pyproject.toml or package.json) in the plugin "
                               f"holds {shown}, so the sandbox has nothing to install")
        return
    relative = "./" + (package.relative_to(root.resolve()).as_posix() if package != root.resolve() else "")
    try:
        parse_target(str(package))
        entries = _entry_points(package)
    except UsageError as exc:
        planned.not_scanned = f"the package folder {escape_for_terminal(relative, 200)} of {shown}: {exc}"
        return
    if path.name not in entries:
        planned.not_scanned = (f"{shown} is not an entry point of the package at {escape_for_terminal(relative, 200)}"
                               f" (its scripts: {', '.join(sorted(entries)[:10]) or 'none'}); scan that folder with "
                               "--command PROGRAM")
        return
    expanded = expand_bundled(server.args, root, package)
    planned.env = expanded.env
    planned.mapping = LaunchMapping(target=str(package), runner="plugin", package=shown, command=path.name,
                                    server_args=expanded.args, notes=expanded.notes)


def _package_folder(root: Path, start: Path) -> Path | None:
    """The nearest folder from `start` up to the plugin root that holds a package manifest."""
    base = root.resolve()
    for folder in [start, *start.parents]:
        if any((folder / name).is_file() for name in MANIFESTS):
            return folder
        if folder == base or base not in folder.parents:
            return None
    return None


def _entry_points(package: Path) -> set[str]:
    """The programs a package folder installs: [project.scripts] of pyproject.toml, or package.json's bin. parse_target
    read the manifest first (valid, with a valid name), so only the shape of the field read here is left to check:
    `scripts = 5` is no table of programs."""
    if (package / "pyproject.toml").is_file():
        project = tomllib.loads((package / "pyproject.toml").read_text("utf-8")).get("project", {})
        scripts = project.get("scripts") if isinstance(project, dict) else None
        return set(scripts) if isinstance(scripts, dict) else set()
    manifest = json.loads((package / "package.json").read_text("utf-8"))
    bin_field = manifest.get("bin")
    if isinstance(bin_field, str):
        return {str(manifest.get("name", "")).split("/")[-1]}
    return set(bin_field) if isinstance(bin_field, dict) else set()
