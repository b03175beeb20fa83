"""Which install steps an install runs: npm packages with install scripts in dependency order, and the Python
distributions built from source. Pure logic on lockfiles as npm and uv write them; no Docker."""

from __future__ import annotations

import textwrap

from sandbox.install.npm import script_names, script_packages
from sandbox.install.phases import UV_WHEELS, UV_WHEELS_AND_BUILDS, InstallSteps, install_pypi
from sandbox.install.pypi import requirement_lines, source_builds
from sandbox.install.request import InstallRequest
from sandbox.install.steps import StepResult


def _lock(**packages: dict) -> dict:
    return {"lockfileVersion": 3, "packages": {"": {"dependencies": {"app": "1.0.0"}}, **packages}}


def test_dependencies_run_their_scripts_before_dependents():
    lock = _lock(**{
        "node_modules/app": {"version": "1.0.0", "hasInstallScript": True, "dependencies": {"zlib-ish": "^2"}},
        # app -> zlib-ish (no script) -> native (script): native runs first although "app" sorts before it.
        "node_modules/zlib-ish": {"version": "2.0.0", "dependencies": {"native": "^3"}},
        "node_modules/native": {"version": "3.0.0", "hasInstallScript": True},
        # A nested copy shadows the hoisted one for its parent only (Node's resolution).
        "node_modules/app/node_modules/helper": {"version": "0.1.0", "hasInstallScript": True},
        "node_modules/aaa": {"version": "1.0.0", "hasInstallScript": True},
    })
    order = [p.path for p in script_packages(lock)]
    assert order.index("node_modules/native") < order.index("node_modules/app")
    # Unrelated packages: deeper folders first, then by path.
    assert order == ["node_modules/app/node_modules/helper", "node_modules/aaa", "node_modules/native",
                     "node_modules/app"]


def test_nested_resolution_and_cycles_are_deterministic():
    lock = _lock(**{
        "node_modules/a": {"version": "1.0.0", "hasInstallScript": True, "dependencies": {"b": "*"}},
        "node_modules/b": {"version": "1.0.0", "hasInstallScript": True, "dependencies": {"a": "*"}},
        "node_modules/c": {"version": "1.0.0", "hasInstallScript": True, "dependencies": {"d": "*"}},
        "node_modules/c/node_modules/d": {"version": "2.0.0", "hasInstallScript": True},
        "node_modules/d": {"version": "1.0.0"},
    })
    order = [p.path for p in script_packages(lock)]
    # c needs its own nested d, not the hoisted one; a and b need each other: the cycle is broken by path, last.
    assert order == ["node_modules/c/node_modules/d", "node_modules/c", "node_modules/a", "node_modules/b"]
    assert order == [p.path for p in script_packages(lock)]


def test_only_installed_folders_with_scripts_are_listed():
    lock = _lock(**{
        "node_modules/dev-tool": {"version": "1.0.0", "hasInstallScript": True, "dev": True},  # --omit=dev
        "node_modules/linked": {"resolved": "../elsewhere", "link": True, "hasInstallScript": True},
        "node_modules/../../etc": {"version": "1.0.0", "hasInstallScript": True},  # never handed to npm or rm
        "node_modules/plain": {"version": "1.0.0"},
        "node_modules/alias": {"name": "real-name", "version": "4.0.0", "hasInstallScript": True, "optional": True},
        "node_modules/@scope/evil": {"version": "1.0.0\x1b[2J", "hasInstallScript": True},
    })
    listed = {p.path: p for p in script_packages(lock)}
    assert set(listed) == {"node_modules/alias", "node_modules/@scope/evil"}
    assert listed["node_modules/alias"].label == "real-name@4.0.0" and listed["node_modules/alias"].optional
    assert listed["node_modules/@scope/evil"].label == "@scope/evil@1.0.0\\x1b[2J"
    assert script_packages({}) == [] and script_packages({"packages": []}) == []


def test_script_names_follow_npms_order():
    assert script_names({"scripts": {"postinstall": "x", "preinstall": "y", "test": "z"}}) == ("preinstall",
                                                                                              "postinstall")
    assert script_names({"scripts": {"install": "node-gyp rebuild"}}) == ("install",)
    assert script_names({}) == ("install",)  # hasInstallScript with none declared: npm's implicit node-gyp install
    assert script_names({"scripts": {"postinstall": "  "}}) == ("install",)


REQUIREMENTS = textwrap.dedent("""\
    docopt==0.6.2 \\
        --hash=sha256:49b3a825280bd66b3aa83585ef59c4a8c82f2c8a522dbe754a8bc8d08c85c491
        # via -r /tmp/requested.txt
    h11==0.16.0 \\
        --hash=sha256:4e35b956cf45792e4caa5885e69fba00bdbc6ffafbfa020300e549b208ee5ff1 \\
        --hash=sha256:63cf8bbe7522de3bf65932fda1d9c2772064ffb3dae62d55932da54b31cb6c86
        # via
        #   httpcore
        #   uvicorn
    Typing_Extensions==4.16.0 ; python_version < '3.14' \\
        --hash=sha256:aaaa
    """)

PYLOCK = textwrap.dedent("""\
    lock-version = "1.0"
    created-by = "uv"

    [[packages]]
    name = "docopt"
    version = "0.6.2"
    sdist = { url = "https://files.pythonhosted.org/packages/docopt-0.6.2.tar.gz", hashes = { sha256 = "49b3" } }

    [[packages]]
    name = "h11"
    version = "0.16.0"
    sdist = { url = "https://files.pythonhosted.org/packages/h11-0.16.0.tar.gz", hashes = { sha256 = "4e35" } }
    wheels = [{ url = "https://files.pythonhosted.org/packages/h11-0.16.0-py3-none-any.whl", hashes = { sha256 = "63cf" } }]

    [[packages]]
    name = "typing-extensions"
    version = "4.16.0"
    wheels = [{ url = "https://files.pythonhosted.org/packages/t.whl", hashes = { sha256 = "aaaa" } }]
    """).encode()


def test_requirement_lines_join_each_entry():
    lines = requirement_lines(REQUIREMENTS)
    assert lines["docopt"] == ("docopt==0.6.2 --hash=sha256:49b3a825280bd66b3aa83585ef59c4a8c82f2c8a522dbe754a8bc8d08c8"
                               "5c491")
    assert lines["h11"].count("--hash=") == 2 and "#" not in lines["h11"]
    assert lines["typing-extensions"].startswith("Typing_Extensions==4.16.0 ; python_version < '3.14' --hash=")


def test_source_builds_are_the_packages_with_no_wheel_here():
    builds = source_builds(PYLOCK, REQUIREMENTS)
    assert builds is not None and [(b.name, b.version, b.label) for b in builds] == [
        ("docopt", "0.6.2", "docopt@0.6.2")]
    assert builds[0].requirement.startswith("docopt==0.6.2 --hash=sha256:49b3")
    assert source_builds(b'lock-version = "1.0"\n', REQUIREMENTS) is None  # no packages table: unknown
    assert source_builds(b"not [toml", REQUIREMENTS) is None
    assert source_builds(PYLOCK, "h11==0.16.0\n") is None  # the two files disagree: split nothing
    assert source_builds(b'[[packages]]\nname = "h11"\nversion = "1"\nwheels = [{url = "x"}]\n', REQUIREMENTS) == []


class _RecordingRunner:
    """A stand-in for the install container's StepRunner: each step succeeds, and the resolution's two files read
    as given (`pylock`: what the PEP 751 export left in /tmp; empty when it wrote nothing)."""

    def __init__(self, pylock: bytes) -> None:
        self.pylock = pylock
        self.commands: list[list[str]] = []

    def run(self, command: list[str]) -> StepResult:
        self.commands.append(command)
        return StepResult(exit_code=0, output="")

    def engine_now(self) -> float:
        return float(len(self.commands))

    def read_file(self, path: str) -> bytes:
        return REQUIREMENTS.encode()

    def read_tmp_file(self, path: str, max_bytes: int) -> bytes:
        return self.pylock


def _pypi_install(pylock: bytes) -> InstallSteps:
    steps = InstallSteps(_RecordingRunner(pylock), "h11==0.16.0")  # type: ignore[arg-type]
    install_pypi(steps, InstallRequest("pypi", "h11==0.16.0", "h11", "pypi:h11@0.16.0", version="0.16.0"))
    return steps


def test_an_unreadable_resolution_says_the_last_step_may_build_unnamed_sdists():
    """The PEP 751 export wrote nothing: which packages have no wheel is unknown, so the last step may build sdists
    (no --no-build) and the install says it cannot name them rather than reading as nothing built."""
    steps = _pypi_install(b"")
    assert steps.built_unknown is True and steps.built == []
    assert steps.windows[-1].script == UV_WHEELS_AND_BUILDS
    assert "--no-build" not in steps.runner.commands[-1][2]  # type: ignore[attr-defined]


def test_a_readable_resolution_with_wheels_only_builds_nothing_and_knows_it():
    wheels_only = b'[[packages]]\nname = "h11"\nversion = "0.16.0"\nwheels = [{url = "x"}]\n'
    steps = _pypi_install(wheels_only)
    assert steps.built_unknown is False and steps.built == []
    assert steps.windows[-1].script == UV_WHEELS
    assert "--no-build" in steps.runner.commands[-1][2]  # type: ignore[attr-defined]
