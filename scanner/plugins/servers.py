"""Which of a plugin's declared servers the sandbox runs, and as what: a `./` command bundled in the plugin is the
local package folder that holds it (its entry point the program), an npx/uvx/… launcher the registry target it names
(scanner.pipeline.doors), and everything else one line saying why it is not scanned (a compiled executable, a remote
entry, an entry a conformant client rejects). Pure: reads the plugin folder only."""

from __future__ import annotations

import json
import tomllib
from pathlib import Path

from sandbox.core.untrusted import escape_for_terminal
from scanner.errors import UsageError
from scanner.pipeline.config_doors import REMOTE_NOT_SCANNED, PlannedServer
from scanner.pipeline.doors import PYTHON, SCRIPT_RUNNERS, SHELLS, LaunchMapping, NotMapped, map_launch
from scanner.pipeline.targets import parse_target
from scanner.plugins.containment import inside
from scanner.plugins.model import DeclaredServer, EnvelopeResult
from scanner.provenance.launch_runners import runner_call
from scanner.provenance.shell_words import program_name

COMPILED = "not auditable: compiled executable"
MAGIC = (b"\x7fELF", b"MZ", b"\xfe\xed\xfa\xce", b"\xfe\xed\xfa\xcf", b"\xce\xfa\xed\xfe", b"\xcf\xfa\xed\xfe",
         b"\xca\xfe\xba\xbe")
MANIFESTS = ("pyproject.toml", "package.json")
PLUGIN_VARS = ("${PLUGIN_ROOT}", "${PLUGIN_DATA}")


def plan_plugin(result: EnvelopeResult) -> list[PlannedServer]:
    return [plan_server(result, server) for server in result.servers]


def plan_server(result: EnvelopeResult, server: DeclaredServer) -> PlannedServer:
    planned = PlannedServer(name=server.name, env_not_passed=list(server.env_names))
    rejected = sorted({f.rule_id for f in result.rejected(server.name)})
    if rejected:
        planned.not_scanned = f"not loaded: a conformant client rejects this entry ({', '.join(rejected)})"
    elif server.transport in ("streamable-http", "sse"):
        planned.not_scanned = REMOTE_NOT_SCANNED
    elif server.transport != "stdio" or not server.command:
        planned.not_scanned = "no command to launch"
    elif server.command.startswith("./"):
        _bundled(result.root, server, planned)
    else:
        _launcher(result.root, server, planned)
    if planned.mapping is not None and any(v in a for a in server.args for v in PLUGIN_VARS):
        planned.mapping.notes.append("arguments naming ${PLUGIN_ROOT} or ${PLUGIN_DATA} are passed unexpanded")
    return planned


def _launcher(root: Path, server: DeclaredServer, planned: PlannedServer) -> None:
    argv = [server.command or "", *server.args]
    try:
        planned.mapping = map_launch(argv, root)
    except NotMapped as exc:
        prog = program_name(argv[0])
        script = prog in SCRIPT_RUNNERS | SHELLS | {"docker", "podman", "uv"} or PYTHON.fullmatch(prog)
        if runner_call(argv) is None and not script:
            planned.not_scanned = (f"{COMPILED} (`{escape_for_terminal(prog, 80)}` is a program on the user's "
                                   "machine, not a package the sandbox can install)")
        else:
            planned.not_scanned = str(exc)


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
    planned.mapping = LaunchMapping(target=str(package), runner="plugin", package=shown, command=path.name,
                                    server_args=list(server.args))


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
    """The programs a package folder installs: [project.scripts] of pyproject.toml, or package.json's bin."""
    if (package / "pyproject.toml").is_file():
        project = tomllib.loads((package / "pyproject.toml").read_text("utf-8")).get("project", {})
        return set(project.get("scripts", {}) or {})
    manifest = json.loads((package / "package.json").read_text("utf-8"))
    bin_field = manifest.get("bin")
    if isinstance(bin_field, str):
        return {str(manifest.get("name", "")).split("/")[-1]}
    return set(bin_field) if isinstance(bin_field, dict) else set()
