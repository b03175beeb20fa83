"""The door a launch command opens: `scan -- npx -y @scope/pkg@1.2.3 ARGS`, a pasted `scan "uvx pkg==1.0"`, or a
client config's `command` and `args`, mapped to the target the sandbox installs (npm:…, pypi:… or a local package
folder or archive), the program to run when the command names one other than the package's own, and the arguments
the server gets.

The runners are read by the launch-command parser I1 uses (scanner.provenance.launch_runners: npx, pnpx, bunx,
npm exec, pnpm dlx, yarn dlx, uvx, uv tool run, pipx run), plus `python -m MODULE`. A command that names no
package the sandbox can install (a program on this machine, a local script, a shell script, `docker run`, a git or
URL source, a version range) is refused with one line saying what to pass instead. Nothing here prints an argument:
only the runner, the program's name and the package spec (redacted).
"""

from __future__ import annotations

import re
import shlex
import sys
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

from sandbox.core.untrusted import escape_for_terminal
from scanner.errors import UsageError
from scanner.pipeline.targets import PYPI_NAME, VERSION_TEXT, parse_target
from scanner.provenance.redact import redact_secrets
from scanner.provenance.shell_words import Unparseable, program_name, split_words, unwrap

if TYPE_CHECKING:  # the runners' grammar (the ecosystems) and the report model are imported when a launch command
    # is mapped or a report told of it: `scan TARGET` asks `launch_words` and `folder_script` before its head start
    from scanner.provenance.launch_runners import RunnerCall
    from scanner.provenance.package_specs import PackageRef
    from scanner.report.model import Finding, LaunchOrigin, Report

LAUNCH_EXAMPLE = "mcp-sandbox scan -- npx -y @scope/pkg@1.2.3, or a target: npm:NAME, pypi:NAME or a package folder"
PYTHON = re.compile(r"python(\d+(\.\d+)?)?|py")
SCRIPT_RUNNERS = {"node", "nodejs", "deno", "bun", "tsx", "ts-node"}
SCRIPT_MANIFESTS = {"node": "package.json", "nodejs": "package.json", "python": "pyproject.toml"}
# A runner's options whose value is the next word (`node -r dotenv/config dist/index.js`): that word is not the script
OPTION_VALUES = {"package.json": {"-r", "--require", "--import", "--loader", "--experimental-loader", "-C",
                                  "--conditions", "--input-type", "--env-file", "--inspect-port", "--title"},
                 "pyproject.toml": {"-W", "-X"}}
# Options after which no script file follows (code given inline, or a module)
NO_SCRIPT = {"-m", "-c", "-e", "--eval", "-p", "--print"}
SHELLS = {"sh", "bash", "zsh", "dash", "ash", "ksh", "fish", "pwsh", "powershell", "cmd"}


@dataclass(frozen=True)
class LaunchMapping:
    """What a launch command was mapped to: the target `scan` installs, and how the server is started."""

    target: str  # the target text parse_target reads: npm:…, pypi:…, or an absolute path
    runner: str  # npx, uvx, pipx run, python -m, …
    package: str  # the package as the command named it (redacted)
    command: str | None = None  # the program to run (as --command), when the command names one
    server_args: list[str] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)  # what the mapping could not carry over
    findings: tuple[Finding, ...] = ()  # I1 when the command fetches whatever version is newest at each start

    def describe(self) -> str:
        """One line for stderr: what the command was mapped to (never its arguments, which may hold secrets)."""
        how = [f"program {_shown(self.command)}"] if self.command else []
        how += [f"{len(self.server_args)} server argument(s)"] if self.server_args else []
        line = f"mapped the launch command `{self.runner} {self.package}` to {self.target}"
        line += (f" ({'; '.join(how)})" if how else "") + "".join(f"; note: {n}" for n in self.notes)
        return escape_for_terminal(line, limit=1_000)


class NotMapped(UsageError):
    """A launch command that names no package the sandbox can install (exit 2, one line)."""

    def __init__(self, why: str) -> None:
        super().__init__(f"launch command not mapped: {why}")


def launch_words(target: str | None, server_args: list[str], tail: list[str] | None) -> list[str] | None:
    """The launch command in `scan`'s arguments, or None for `scan TARGET [-- SERVER ARGS]`.

    `tail` is what followed the first `--` on the command line (None: no `--`). It is a launch command when no TARGET
    came before the `--` (every positional argument is in the tail), or when TARGET is a pasted command line (it
    holds whitespace and is no existing path)."""
    positionals = ([target] if target is not None else []) + server_args
    if tail is not None and positionals and positionals == tail:
        return positionals
    if target is not None and any(ch.isspace() for ch in target.strip()) and not Path(target).expanduser().exists():
        return positionals
    return None


def map_launch(words: list[str], base: Path) -> LaunchMapping:
    """Map a launch command (argv, or one pasted shell string plus arguments) to a target; raises NotMapped.
    Relative paths in it are read from `base` (the working directory, or the folder of a client config)."""
    if not words or not words[0].strip():
        raise NotMapped(f"the launch command after -- is empty; give one, e.g. {LAUNCH_EXAMPLE}")
    try:
        first = split_words(words[0]) if any(ch.isspace() for ch in words[0].strip()) else [words[0]]
        argv = [*first, *words[1:]]
        segments = unwrap(argv, 0)
    except Unparseable as exc:
        raise NotMapped(f"the launch command cannot be split into shell words ({exc}); give it as separate words "
                        f"after --, e.g. {LAUNCH_EXAMPLE}") from None
    if len(segments) != 1:
        raise NotMapped(f"the launch command runs {len(segments)} programs (a shell script); give the one that starts "
                        f"the server, e.g. {LAUNCH_EXAMPLE}")
    mapping = _map_program(segments[0], base)
    if segments[0] != argv:
        mapping.notes.append(f"the wrapper around `{_shown(program_name(segments[0][0]))}` (env, sh -c, exec) was "
                             "dropped: its environment assignments are not passed (use --env NAME=VALUE)")
    return mapping


def _map_program(argv: list[str], base: Path) -> LaunchMapping:
    from scanner.provenance.launch_runners import runner_call

    call = runner_call(argv)
    if call is not None:
        return _map_runner(call, base)
    prog, rest = program_name(argv[0]), argv[1:]
    script = map_script(prog, rest, base)
    if script is not None:
        return script
    if PYTHON.fullmatch(prog):
        return _map_python(prog, rest)
    if prog in ("docker", "podman") and rest[:1] == ["run"]:
        mapped = map_docker_run(prog, rest[1:])
        if mapped is not None:
            return mapped
    raise NotMapped(_refusal(prog, rest))


def map_script(prog: str, rest: list[str], base: Path, folder: Path | None = None) -> LaunchMapping | None:
    """`node FILE ARGS` / `python FILE ARGS` where FILE (read from `base`) is inside a package folder: that folder is
    the target, and the sandbox runs the file from its copy there. `folder`: the folder target the file must be in
    (`scan ./pkg -- node dist/index.js`); None: the nearest folder above the file with the runner's manifest
    (package.json for node, pyproject.toml for python). None when the command is no such script."""
    manifest = SCRIPT_MANIFESTS.get("python" if PYTHON.fullmatch(prog) else prog)
    if manifest is None:
        return None
    flags = _script_index(rest, OPTION_VALUES[manifest])
    if flags == len(rest) or NO_SCRIPT & set(rest[:flags]):
        return None
    file = (base / rest[flags]).expanduser()
    if not file.is_file():
        return None
    file = file.resolve()
    package = folder.resolve() if folder is not None else _holding(file.parent, manifest)
    if package is None or package not in file.parents or not (package / manifest).is_file():
        return None
    from sandbox.install.request import local_source

    runner = "python" if manifest == "pyproject.toml" else "node"
    inside = f"{local_source(package)}/{file.relative_to(package).as_posix()}"
    command = shlex.join([runner, *rest[:flags], inside])
    note = (f"the script runs from the package folder's copy in the sandbox ({_shown(inside)}); its working "
            "directory is the sandbox's seeded /workspace")
    return LaunchMapping(str(package), runner, _shown(file.name), command, rest[flags + 1:], [note])


def _script_index(rest: list[str], takes_value: set[str]) -> int:
    """Where the script is among a runner's words: the first that is no option nor an option's value."""
    index = 0
    while index < len(rest) and rest[index].startswith("-"):
        index += 2 if rest[index] in takes_value else 1
    return min(index, len(rest))


def folder_script(target: str | None, server_args: list[str]) -> LaunchMapping | None:
    """`scan ./pkg -- node dist/index.js ARGS`: the arguments after a folder target start with a script runner and
    a file inside that folder (read from the folder, then from the working directory); None otherwise."""
    if target is None or not server_args or not Path(target).expanduser().is_dir():
        return None
    folder = Path(target).expanduser()
    prog, rest = program_name(server_args[0]), server_args[1:]
    for base in (folder, Path.cwd()):
        mapping = map_script(prog, rest, base, folder)
        if mapping is not None:
            return mapping
    return None


def _holding(start: Path, manifest: str) -> Path | None:
    """The nearest folder from `start` up that holds `manifest` (never the file system's root)."""
    for folder in [start, *start.parents]:
        if folder.parent != folder and (folder / manifest).is_file():
            return folder
    return None


NPM_RUNNERS = {"npx", "pnpx", "bunx", "npm exec", "pnpm dlx", "yarn dlx"}
# A runner's options that fetch the package from another index than the public registry the sandbox installs from
# (npm: also a config file or a scope's registry, `--@scope:registry=URL`), or that install more, or other versions
# of its dependencies, than the package as its registry resolves it.
NPM_ELSEWHERE = {"--registry", "--reg", "--userconfig", "--globalconfig"}
PYTHON_ELSEWHERE = {"--index", "--index-url", "-i", "--extra-index-url", "--default-index", "-f", "--find-links",
                    "--config-file"}
RESHAPING_OPTIONS = {"--with-requirements", "--with-editable", "--overrides", "--constraints", "-c", "--pip-args",
                     "--exclude-newer", "--exclude-newer-package", "--prerelease", "--prerelease-package",
                     "--resolution"}
# npm's: the version a tag or a date picks (`--tag beta`: the package at `beta`, not `latest`; `--before DATE`: the
# package and its dependencies as they were then) is not the one the sandbox resolves.
NPM_RESHAPING = {"--tag", "--before", "--enjoy-by"}


def option_refusal(call: RunnerCall) -> str | None:
    """Why a runner's own options keep its package from being what the sandbox installs (None: they do not)."""
    runner, options, npm = call.runner, sorted(call.options), call.runner in NPM_RUNNERS
    if npm and call.options & {"-c", "--call"}:
        return (f"`{runner} -c` runs a shell string; give the package as npm:NAME and the program with "
                "--command 'PROGRAM ARGS'")
    elsewhere = [o for o in options if o in NPM_ELSEWHERE or o.startswith("--@") and o.endswith(":registry")] if npm \
        else [o for o in options if o in PYTHON_ELSEWHERE]
    if elsewhere:
        return (f"`{runner} {_shown(elsewhere[0])}` fetches from another index than the public registry the sandbox "
                "installs from, so the package there may not be the one of that name on the registry; download it "
                "from that index and scan the archive (mcp-sandbox scan ./PKG.tgz or ./PKG.whl)")
    reshaping = [o for o in options if o in (NPM_RESHAPING if npm else RESHAPING_OPTIONS)]
    if reshaping:
        return (f"`{runner} {_shown(reshaping[0])}` can change what is installed with the package (more packages, "
                "other versions of its dependencies, another index); the sandbox installs the one package as its "
                "registry resolves it: drop that option if that is what you mean")
    return None


def _map_runner(call: RunnerCall, base: Path) -> LaunchMapping:
    runner = call.runner
    refusal = option_refusal(call)
    if refusal is not None:
        raise NotMapped(refusal)
    if not call.packages:
        raise NotMapped(f"`{runner}` names no package; give one, e.g. {LAUNCH_EXAMPLE}")
    if len(call.packages) > 1:
        named = ", ".join(_shown(p.display) for p in call.packages)
        raise NotMapped(f"`{runner}` installs {len(call.packages)} packages ({named}); the sandbox installs one: "
                        f"scan each on its own (e.g. mcp-sandbox scan -- {runner} {_shown(call.packages[0].display)})")
    if call.options & {"--from", "--spec", "-p", "--package"} and call.command is None:
        raise NotMapped(f"`{runner}` names a package but no program to run; add the program after it")
    ref = call.packages[0]
    notes = [f"`{runner} --env-file` not read: its variables are not passed (use --env NAME=VALUE)"] \
        if "--env-file" in call.options else []
    from scanner.provenance.launch import unpinned_finding

    unpinned = () if ref.pinned else (unpinned_finding(ref),)
    return LaunchMapping(_ref_target(runner, ref, base), runner, _shown(ref.display), call.command, call.args, notes,
                         unpinned)


def _ref_target(runner: str, ref: PackageRef, base: Path) -> str:
    """The target text for the package a runner fetches (validated: a bad one is refused here, before anything)."""
    shown = _shown(ref.display)
    if ref.source == "file":
        path = (base / ref.name.removeprefix("file:")).expanduser()
        if not path.exists():
            raise NotMapped(f"`{runner} {shown}` names a local package that does not exist (relative paths are read "
                            f"from {base}); give the package folder or archive")
        target = str(path.resolve())
    elif ref.source == "url" and "://" not in ref.display:  # pip reads `pkg@1.0` as a direct reference to "1.0"
        raise NotMapped(f"`{runner} {shown}` names no version pip reads (`NAME @ …` is a direct reference to a URL); "
                        f"give NAME==VERSION, e.g. {runner} {_shown(ref.name)}==1.0.0")
    elif ref.source in ("git", "url"):
        raise NotMapped(f"`{runner} {shown}` fetches from a {ref.source} source, not a registry; clone or download it "
                        "and scan the folder or archive (mcp-sandbox scan ./FOLDER)")
    elif ref.ecosystem == "npm":
        target = _npm_target(runner, ref, shown)
    else:
        target = _pypi_target(runner, ref, shown)
    try:
        parse_target(target)
    except UsageError as exc:
        raise NotMapped(f"`{runner} {shown}` maps to {target!r}, which is not a target: {exc}") from None
    return target


def _npm_target(runner: str, ref: PackageRef, shown: str) -> str:
    if not ref.spec:
        return f"npm:{ref.name}"
    if VERSION_TEXT.match(ref.spec):  # an exact version or a dist-tag
        return f"npm:{ref.name}@{ref.spec}"
    raise NotMapped(f"`{runner} {shown}` names a version range; give an exact version or a tag "
                    f"(e.g. npm:{ref.name}@1.2.3)")


def _pypi_target(runner: str, ref: PackageRef, shown: str) -> str:
    if "[" in ref.display:
        raise NotMapped(f"`{runner} {shown}` asks for extras, which the sandbox cannot install yet; scan "
                        f"pypi:{ref.name} (without them) if that is what you mean")
    if ";" in ref.display:  # PEP 508: whether it is installed at all depends on the client's platform
        raise NotMapped(f"`{runner} {shown}` has an environment marker, so whether it installs depends on the "
                        f"client's platform; scan pypi:{ref.name} (with its exact version) if that is what you mean")
    if ref.spec in ("", "latest"):
        return f"pypi:{ref.name}"
    from scanner.ecosystems.registry import ecosystem

    version = ecosystem("pypi").exact_version(ref.spec)
    if version is None:
        raise NotMapped(f"`{runner} {shown}` names a version range; give an exact version "
                        f"(e.g. pypi:{ref.name}==1.0.0)")
    return f"pypi:{ref.name}=={version}"


def _map_python(prog: str, rest: list[str]) -> LaunchMapping:
    """`python -m MODULE ARGS`: the package is taken to be named after the module's top level (PyPI reads `_` and
    `-` alike); `python FILE` is a local script."""
    i = 0
    while i < len(rest) and rest[i].startswith("-") and rest[i] != "-m":
        i += 1  # the interpreter's own flags (-u, -B, -X …)
    if i + 1 >= len(rest) or rest[i] != "-m":
        raise NotMapped(_refusal(prog, rest))
    module = rest[i + 1]
    top = module.split(".")[0]
    if top in sys.stdlib_module_names:  # `python -m http.server`: no PyPI package is named after it (`http` is another)
        raise NotMapped(f"`{prog} -m {_shown(module)}` runs a module of Python's standard library, not a package; "
                        "give the package that serves MCP: pypi:NAME --command 'python -m MODULE'")
    if not PYPI_NAME.match(top):
        raise NotMapped(f"`{prog} -m {_shown(module)}` names no module a PyPI package could be named after; give "
                        "pypi:NAME --command 'python -m MODULE'")
    name = top.replace("_", "-").lower()
    note = (f"the package is taken to be named after the module ({_shown(module)} → pypi:{name}); if it is not, "
            f"scan pypi:NAME --command 'python -m {_shown(module)}'")
    return LaunchMapping(f"pypi:{name}", "python -m", _shown(module), shlex.join(["python", "-m", module]),
                         rest[i + 2:], [note])


def _refusal(prog: str, rest: list[str]) -> str:
    """Why a program's launch cannot be mapped, and what to pass instead."""
    shown = _shown(prog)
    sub = rest[0].lower() if rest else ""
    if prog in ("docker", "podman"):
        why = (f"`{shown} {_shown(sub)}` has options the sandbox would not honour (only -i, --rm, --init and "
               "-e NAME without a value map)" if sub == "run" else f"`{shown} {_shown(sub)}` does not run one image")
        do = "scan the image itself: mcp-sandbox scan docker:IMAGE[:TAG|@sha256:DIGEST] -- ARGS (and --env NAME=VALUE)"
    elif prog == "uv" and sub == "run":
        why, do = "`uv run` runs a project's own environment", "scan the project folder (mcp-sandbox scan ./PROJECT " \
                                                              "--command PROGRAM)"
    elif prog in SCRIPT_RUNNERS or PYTHON.fullmatch(prog):
        why = f"`{shown}` runs a script on this machine, not a package"
        do = f"scan the package folder that holds it (mcp-sandbox scan ./FOLDER --command '{shown} …')"
    elif prog in SHELLS:
        why = f"`{shown}` runs a shell script on this machine"
        do = f"give the command that starts the server, e.g. {LAUNCH_EXAMPLE}"
    else:
        why = f"`{shown}` is a program on this machine, not a package the sandbox can install"
        do = f"pass its package instead (npm:NAME, pypi:NAME, or its folder with --command {shown})"
    return f"{why}; {do}"


def _shown(text: str) -> str:
    """A name or spec from the command, safe to print: no credential, at most 200 characters."""
    text = redact_secrets(text)
    return text if len(text) <= 200 else text[:199] + "…"


def launch_origin(mapping: LaunchMapping, config_server: str | None = None) -> LaunchOrigin:
    from scanner.report.model import LaunchOrigin

    return LaunchOrigin(runner=mapping.runner, package=mapping.package, config_server=config_server,
                        notes=list(mapping.notes))


def with_launch(report: Report, origin: LaunchOrigin) -> Report:
    """The report, its target saying which launch command it was mapped from."""
    return report.model_copy(update={"target": report.target.model_copy(update={"launch": origin})})


DOCKER_RUN_FLAGS = {"-i", "--interactive", "--rm", "--init"}
_ENV_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")


def map_docker_run(prog: str, words: list[str]) -> LaunchMapping | None:
    """`docker run [-i] [--rm] [--init] [-e NAME]… IMAGE [ARGS]` as `docker:IMAGE -- ARGS`; None when the line has
    any other option (a mount, a port, a network, a user, a value for -e: what the sandbox would not honour), or
    names no image the door can parse. Environment names given without a value come from the caller's environment,
    which never reaches the sandbox: they are listed in the notes."""
    from scanner.pipeline.image_target import IMAGE_PREFIX, parse_image_target

    i, names = 0, []
    while i < len(words) and words[i].startswith("-"):
        word = words[i]
        if word in DOCKER_RUN_FLAGS:
            i += 1
        elif word in ("-e", "--env") and i + 1 < len(words) and _ENV_NAME.fullmatch(words[i + 1]):
            names.append(words[i + 1])
            i += 2
        else:
            return None
    if i >= len(words):
        return None
    try:
        target = parse_image_target(IMAGE_PREFIX + words[i])
    except UsageError:
        return None
    notes = [f"-e {name} is not passed (the host's environment never reaches the sandbox; use --env {name}=VALUE)"
             for name in names]
    return LaunchMapping(target.requested, f"{prog} run", _shown(target.display), None, words[i + 1:], notes)
