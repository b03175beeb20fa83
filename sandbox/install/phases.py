"""The install's steps per ecosystem, each opening an attribution window (sandbox/install_windows.py) that names the
package and script it runs, or the phase when it runs no package's script.

npm: `npm install --ignore-scripts` fetches and unpacks the tree (no package code runs; a local folder with a
`prepare` script, which npm runs while packing it, is packed in a step of its own first), then, unless --ignore-scripts was asked for, `npm rebuild <folder>` runs the
preinstall/install/postinstall scripts of one package per step, dependencies first (sandbox/npm_scripts.py). Bundled
dependencies get their own step (`--rebuild-bundle=false`). An optional package whose scripts fail is removed, as
npm does; any other failure stops the install.

PyPI (registry target): `uv pip compile` resolves the hash-pinned tree (a build backend may run here for an sdist's
metadata), each package built from an sdist is installed alone (`--no-deps --require-hashes`: its build backend
runs in its own step), then the rest of the tree goes in from wheels with `--no-build`, so no build can hide in that
step. A local Python target is one step (uv builds it and whatever it needs).
"""

from __future__ import annotations

import dataclasses
import json
from pathlib import Path

from sandbox.core.errors import SandboxError
from sandbox.core.images import ProgressFn
from sandbox.install.steps import StepLeftover, StepResult, StepRunner
from sandbox.install.windows import Window
from sandbox.install.npm import ScriptPackage, script_names, script_packages
from sandbox.install.request import InstallRequest
from sandbox.install.pypi import SETUP_PY_IN_UV_CACHE, BuiltFromSource, SourceBuild, local_setup_py, source_builds
from sandbox.install.writes import StepWrites


NPM_PREFIX = "/opt/server"
NPM_LOCKFILE = f"{NPM_PREFIX}/package-lock.json"
PYTHON_LOCKFILE = "/opt/server/requirements.txt"
PYLOCK = "/tmp/pylock.mcp-sandbox.toml"  # PEP 751: a lock file is named pylock.toml or pylock.NAME.toml
SDIST_REQUIREMENT = '"$TMPDIR/mcp-sandbox-sdist.txt"'  # in the step's own TMPDIR (a shell word): nothing left there
VENV_PYTHON = "/opt/server/venv/bin/python"
MAX_PACKAGE_JSON_BYTES = 4 * 1024 * 1024
MAX_PYLOCK_BYTES = 16 * 1024 * 1024
MAX_NAMED_BUILDS = 5
NPM_REBUILT = "rebuilt dependencies successfully"

NPM_FETCH = "npm install --ignore-scripts (fetching the tree; no install script runs)"
NPM_PACK = "npm pack of the local folder (npm runs its prepare script)"
NPM_PACKED = "/opt/src/packed"  # where that step leaves the folder's package archive (in the install tree)
UV_RESOLVE = "uv pip compile (resolving the tree)"
UV_BUILD = "build backend"
UV_WHEELS = "uv pip install (wheels only, nothing built; installed .pth files may run)"
UV_WHEELS_AND_BUILDS = "uv pip install (wheels and any sdist builds)"
UV_LOCAL = "uv pip install of the local target (builds it and anything it needs from source)"


class InstallSteps:
    """The steps run so far: the window each opened (in order) and its output, for one install of `spec`.

    A step's window opens at the engine's clock. When the engine gives no usable time, steps can no longer be told
    apart: the window that was open stops naming its step, no later one opens, and `attribution_note` says why (the
    report's install section shows it)."""

    def __init__(self, runner: StepRunner, spec: str, windows: list[Window] | None = None,
                 progress: ProgressFn = lambda _step: None) -> None:
        self.runner = runner
        self.spec = spec
        self.progress = progress  # told each step as it begins (its label names a package: untrusted, escaped)
        self.windows: list[Window] = windows if windows is not None else []  # the caller's list: kept on failure
        self.outputs: list[str] = []
        self.attribution_note: str | None = None
        self.writes: list[StepWrites] = []  # per step that wrote outside the install tree, named like its window
        self.built: list[BuiltFromSource] = []  # packages built from source, and whether setup.py ran
        # The resolved tree could not say which packages have no wheel here: the last step may build sdists unnamed.
        self.built_unknown = False
        self._running = ""  # the step being run, as a message names it
        self._step: tuple[str | None, str | None] = (None, None)
        self._step_writes: int | None = None  # index in `writes` of the last step's record
        # The installer's records of the install (npm's lockfile, the hash-pinned tree) as the installer wrote them,
        # before any later step's package code could rewrite them in the install tree: put back once all are over.
        self.kept: dict[str, bytes] = {}

    def run(self, command: list[str], *, package: str | None, script: str | None, heading: str = "") -> StepResult:
        """Open a window (the engine's clock, read before the step starts), then run the step in it."""
        self._open_window(package, script)
        self._running = f"{script} of {package}" if package and script else (script or package or "an install step")
        self._step, self._step_writes = (package, script), None
        self.progress(f"installing {self.spec}: {self._running}")
        return self.run_in_window(command, heading=heading)

    def run_in_window(self, command: list[str], *, heading: str = "") -> StepResult:
        """Run a step that belongs to the window already open (e.g. removing a failed optional package)."""
        try:
            result = self.runner.run(command)
        except StepLeftover as exc:
            # Its process would run on into the next step and be blamed on it: no step runs after this one.
            raise SandboxError(f"installing {self.spec} stopped after the {self._running}: {exc} (it would have "
                               "run on into the next step and been blamed on it)") from None
        self._record_writes(result.writes)
        text = result.output.strip()
        if text and text != NPM_REBUILT:
            self.outputs.append(f"{heading}\n{result.output}" if heading else result.output)
        return result

    def _record_writes(self, writes: StepWrites | None) -> None:
        if writes is None or not writes.wrote:
            return
        package, script = self._step
        if self._step_writes is None:  # the step's first command: a record of its own
            self._step_writes = len(self.writes)
            self.writes.append(dataclasses.replace(writes, package=package, script=script))
            return
        earlier = self.writes[self._step_writes]  # another command in the same window (a failed optional's removal)
        self.writes[self._step_writes] = dataclasses.replace(
            earlier, created=earlier.created + writes.created, modified=earlier.modified + writes.modified,
            more=earlier.more + writes.more, unreadable=earlier.unreadable + writes.unreadable,
            truncated=earlier.truncated or writes.truncated)

    def relabel(self, package: str | None, script: str | None) -> None:
        """Name the last window again, once the step has shown what ran in it (not once steps are no longer timed)."""
        if self._step_writes is not None:  # its writes are named as its window is
            self.writes[self._step_writes] = dataclasses.replace(self.writes[self._step_writes], package=package,
                                                                 script=script)
        if self.attribution_note is None and self.windows:
            self.windows[-1] = dataclasses.replace(self.windows[-1], package=package, script=script)

    def _open_window(self, package: str | None, script: str | None) -> None:
        if self.attribution_note is not None:
            return
        begins = self.runner.engine_now()
        if begins is not None and (not self.windows or begins >= self.windows[-1].begins):
            self.windows.append(Window(begins, package, script))
            return
        # No usable time (none, or earlier than the last window's): where this step begins is unknown, so neither it
        # nor the one before can be told apart from what follows.
        problem = "no usable clock" if begins is None else "a clock that went backwards"
        if self.windows:
            last = self.windows[-1]
            since = f"{last.script} of {last.package}" if last.package and last.script else last.script or "?"
            self.windows[-1] = dataclasses.replace(last, package=None, script=None)
            self.attribution_note = (f"the engine reported {problem} (GET /info SystemTime) before a step; install "
                                     f"egress from the step '{since}' on names no package or script")
        else:
            self.attribution_note = (f"the engine reported {problem} (GET /info SystemTime), so no install step "
                                     "could be timed; install egress names no package or script")

    def put_back(self) -> None:
        """Put the kept records back as the installer wrote them (once every step is over, nothing of the install
        runs): an install script that rewrote them (dropped its own `hasInstallScript`, forged a version or a
        dependency) changes neither the install's manifest nor the installed image's copy of it."""
        for path, data in self.kept.items():
            self.runner.write_file(path, data)

    def require_success(self, result: StepResult, context: str = "") -> None:
        if result.exit_code != 0:
            tail = " | ".join(line.strip() for line in result.output.strip().splitlines()[-6:])
            where = f" {context}" if context else ""
            raise SandboxError(f"installing {self.spec} failed (exit {result.exit_code}){where}: {tail}")

    def output(self, limit: int) -> str:
        return "\n".join(self.outputs)[-limit:]


# ------------------------------------------------------------------------------------------------------------ npm

def install_npm(steps: InstallSteps, request: InstallRequest) -> None:
    fetch = ["npm", "install", "--prefix", NPM_PREFIX, "--omit=dev", "--no-audit", "--no-fund", "--loglevel=warn",
             "--ignore-scripts"]
    spec = request.spec
    if request.local_path is not None and request.local_path.is_dir():
        if _local_prepare(request.local_path):
            spec = _packed_folder(steps, request.spec)
        else:
            fetch.append("--install-links")
    steps.require_success(steps.run([*fetch, spec], package=None, script=NPM_FETCH))
    if request.ignore_scripts:
        return
    for package in script_packages(_read_json(steps, NPM_LOCKFILE, "npm's lockfile")):
        _run_npm_scripts(steps, package)


def _packed_folder(steps: InstallSteps, folder: str) -> str:
    """The local folder packed by npm in a step of its own, returned as the archive to install. npm runs a folder's
    `prepare` while packing it, even with --ignore-scripts: in the step that fetches the tree, a process it left could
    rewrite the lockfile npm writes there, which names the packages whose install scripts run (taking out the
    folder's own `hasInstallScript`: its postinstall, which npm runs on a user's machine, never ran here). Ended with
    this step, it can touch nothing the fetch writes; installing the archive runs no package code."""
    pack = 'mkdir -- "$1" && exec npm pack --ignore-scripts --loglevel=warn --pack-destination "$1" -- "$2"'
    steps.require_success(steps.run(["sh", "-c", pack, "mcp-sandbox-pack", NPM_PACKED, folder], package=None,
                                    script=NPM_PACK))
    packed = steps.runner.regular_files(NPM_PACKED, "*.tgz")
    if len(packed) != 1:
        raise SandboxError(f"packing the local folder left {len(packed)} archives in {NPM_PACKED}, not one (its "
                           "prepare script may have left others)")
    return packed[0]


def _run_npm_scripts(steps: InstallSteps, package: ScriptPackage) -> None:
    raw = steps.runner.read_file(f"{NPM_PREFIX}/{package.path}/package.json", MAX_PACKAGE_JSON_BYTES)
    if raw is None:
        return  # in the lockfile but not on disk (not installed on this platform)
    try:
        manifest = json.loads(raw)
    except (json.JSONDecodeError, UnicodeDecodeError):
        manifest = {}
    scripts = ", ".join(script_names(manifest if isinstance(manifest, dict) else {}))
    heading = f"> {scripts} of {package.label}"
    rebuild = ["npm", "rebuild", "--prefix", NPM_PREFIX, "--loglevel=warn", "--no-audit", "--no-fund",
               "--rebuild-bundle=false", f"{NPM_PREFIX}/{package.path}"]
    result = steps.run(rebuild, package=package.label, script=scripts, heading=heading)
    if result.exit_code != 0 and package.optional:
        # npm drops an optional dependency whose scripts fail; so does this install.
        steps.run_in_window(["rm", "-rf", "--", f"{NPM_PREFIX}/{package.path}"])
        steps.outputs.append(f"{heading}: failed (exit {result.exit_code}); optional, removed")
        return
    steps.require_success(result, f"in the {scripts} script of {package.label}")


def _local_prepare(local_path: Path | None) -> bool:
    """Whether a local folder target declares `prepare`, which npm runs while packing it, even with
    --ignore-scripts. Read from the user's folder on the host."""
    if local_path is None or not local_path.is_dir():
        return False
    try:
        manifest = json.loads((local_path / "package.json").read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return False
    scripts = manifest.get("scripts") if isinstance(manifest, dict) else None
    return isinstance(scripts, dict) and bool(scripts.get("prepare"))


# ----------------------------------------------------------------------------------------------------------- PyPI

def install_pypi(steps: InstallSteps, request: InstallRequest) -> None:
    venv = "set -e; uv venv --quiet --python /usr/bin/python3 /opt/server/venv; "
    describe = f"{VENV_PYTHON} /usr/local/lib/mcp-sandbox/describe_install.py > /opt/server/install.json"
    # The package spec (and any requirement line) is passed as an argument ($1), never interpolated into a script.
    if request.local_path is not None:
        local = f'uv pip install --python {VENV_PYTHON} --compile-bytecode "$1"; '
        steps.require_success(steps.run(["sh", "-c", venv + local + describe, "mcp-sandbox-install", request.spec],
                                        package=None, script=UV_LOCAL))
        setup_py = local_setup_py(request.local_path)  # read from the user's copy on the host
        if setup_py is not None:
            steps.built.append(BuiltFromSource(package=None, setup_py=setup_py))
        return
    # A registry package: resolve the whole tree with hashes first, then install with hashes required, so every file
    # is checked against the index's sha256 and the pinned tree is kept as the install's lockfile. The same
    # resolution written as a PEP 751 lock (offline) says which packages have no wheel here.
    resolve = (
        venv + 'printf "%s\\n" "$1" > /tmp/requested.txt; '
        f"uv pip compile --quiet --no-header --generate-hashes --python {VENV_PYTHON} /tmp/requested.txt "
        f"-o {PYTHON_LOCKFILE}; "
        f"uv pip compile --quiet --no-header --offline --format pylock.toml --python {VENV_PYTHON} "
        f"{PYTHON_LOCKFILE} -o {PYLOCK} || true"
    )
    steps.require_success(steps.run(["sh", "-c", resolve, "mcp-sandbox-install", request.spec],
                                    package=None, script=UV_RESOLVE))
    builds = _source_builds(steps)
    if builds:
        steps.relabel(None, f"{UV_RESOLVE}; build backends may run for metadata: {_names(builds)}")
    steps.built_unknown = builds is None
    for build in builds or []:
        one = f'printf "%s\\n" "$1" > {SDIST_REQUIREMENT}; ' \
              f"uv pip install --python {VENV_PYTHON} --require-hashes --no-deps -r {SDIST_REQUIREMENT}"
        result = steps.run(["sh", "-c", one, "mcp-sandbox-install", build.requirement], package=build.label,
                           script=UV_BUILD, heading=f"> {UV_BUILD} of {build.label}")
        steps.require_success(result, f"building {build.label} from source")
        # uv unpacks the sdist in its cache (the step's own HOME): a setup.py there is what setuptools ran.
        steps.built.append(BuiltFromSource(package=build.label, setup_py=bool(
            result.writes and SETUP_PY_IN_UV_CACHE in result.writes.evidence)))
    no_build = "--no-build " if builds is not None else ""
    rest = (f"set -e; uv pip install --python {VENV_PYTHON} --compile-bytecode --require-hashes {no_build}"
            f"-r {PYTHON_LOCKFILE}; {describe}")
    steps.require_success(steps.run(["sh", "-c", rest], package=None,
                                    script=UV_WHEELS if builds is not None else UV_WHEELS_AND_BUILDS))


def _source_builds(steps: InstallSteps) -> list[SourceBuild] | None:
    """The packages of the resolved tree that have no wheel here (None: unknown), from the lockfile the resolution
    wrote, which is kept as written (InstallSteps.kept): a build backend's later step cannot change the tree."""
    requirements = steps.runner.read_file(PYTHON_LOCKFILE)
    if requirements is not None:
        steps.kept[PYTHON_LOCKFILE] = requirements
    pylock = steps.runner.read_tmp_file(PYLOCK, MAX_PYLOCK_BYTES)
    if requirements is None or not pylock:
        return None
    return source_builds(pylock, requirements.decode("utf-8", errors="replace"))


def _names(builds: list[SourceBuild]) -> str:
    named = ", ".join(b.label for b in builds[:MAX_NAMED_BUILDS])
    return named + (f" and {len(builds) - MAX_NAMED_BUILDS} more" if len(builds) > MAX_NAMED_BUILDS else "")


def _read_json(steps: InstallSteps, path: str, what: str) -> dict[str, object]:
    """The installer's JSON record at `path`, kept as read (InstallSteps.kept): read before any package code ran."""
    raw = steps.runner.read_file(path)
    if raw is not None:
        steps.kept[path] = raw
    try:
        data = json.loads(raw) if raw is not None else None
    except (json.JSONDecodeError, UnicodeDecodeError) as exc:
        raise SandboxError(f"the installer left an unreadable {what} ({path}): {exc}") from None
    if not isinstance(data, dict):
        raise SandboxError(f"the installer finished but left no readable {what} ({path})")
    return data
