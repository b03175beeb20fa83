"""Install-time side effects beyond the network: files an install step wrote outside the install tree (recorded per
step, I11 by place) and packages built from source whose setup.py ran (I5, an install-script record).

Unit tests cover the listing, its comparison, path display and bounding, the classification and the findings. The
docker tests install real packages from tests/servers in the real install container: every host they could try is
the registry (PyPI for setuptools, marked `registry`) or under `.invalid`.
"""

from __future__ import annotations

import base64
import contextlib
import dataclasses
import fnmatch
import hashlib
import subprocess
import tarfile
import uuid
import zipfile

import pytest

from sandbox.core import images
from sandbox.core.errors import SandboxError
from sandbox.core.session import SandboxSession
from sandbox.install import cached
from sandbox.install import container as install
from sandbox.install import phases as install_phases
from sandbox.install.installers import PYPI_WATCH
from sandbox.install.pypi import BuiltFromSource, local_setup_py
from sandbox.install.steps import StepResult, StepRunner
from sandbox.install.writes import (LISTING_SCRIPT, MAX_LISTING_BYTES, ROOTS_COMMAND, StepWrites, WatchPlan,
                                    WriteWatch, bounded, changed, parse_listing, shown_path, writable_roots)
from scanner.pipeline.installation import install_info, step_writes
from scanner.provenance.installed import check_installed
from scanner.report.model import InstallStepWrites
from scanner.rules.install_writes import place, step_finding, write_findings
from tests.sandbox_helpers import REPO
from tests.test_install_egress import script_tree  # noqa: F401  (the packed npm script tree)

SERVERS = REPO / "tests" / "servers"
STEP = "/home/mcp-install/step-0123"


def _listing(*entries: tuple[str, str, str, str]) -> bytes:
    return b"".join(f"{inode} {ctime} {kind} {path}".encode("utf-8", "surrogateescape") + b"\0"
                    for inode, ctime, kind, path in entries)


# ------------------------------------------------------------------------------------------------ listing (unit)


def test_writable_roots_are_the_outermost_places_outside_the_install_tree():
    raw = b"\0".join([b"/", b"/tmp", b"/tmp/x", b"/var/tmp", b"/opt/server", b"/opt/server/node_modules",
                      b"/opt/src", b"/proc/1", b"/home/mcp-install", b"/home/mcp-install/a", b"/run/lock", b""])
    assert writable_roots(raw, ("/opt/server", "/opt/src")) == ("/home/mcp-install", "/run/lock", "/tmp", "/var/tmp")
    assert "-writable" in ROOTS_COMMAND and "/proc" in ROOTS_COMMAND


def test_the_listing_keeps_files_and_links_not_folders_and_drops_a_cut_record():
    raw = _listing(("1", "10.5", "f", "/tmp/a b"), ("2", "11.0", "d", "/tmp/dir"), ("3", "12.0", "l", "/tmp/link"),
                   ("4", "13.0", "f", "/tmp/new\nline")) + b"5 14.0 f /tmp/cut-sh"
    assert parse_listing(raw) == {"/tmp/a b": ("1", "10.5"), "/tmp/link": ("3", "12.0"),
                                  "/tmp/new\nline": ("4", "13.0")}


def test_created_and_modified_by_inode_and_change_time():
    before = {"/tmp/same": ("1", "1.0"), "/tmp/rewritten": ("2", "1.0"), "/tmp/replaced": ("3", "1.0"),
              "/tmp/gone": ("4", "1.0")}
    after = {"/tmp/same": ("1", "1.0"), "/tmp/rewritten": ("2", "2.0"), "/tmp/replaced": ("9", "1.0"),
             "/tmp/new": ("5", "2.0")}
    assert changed(before, after) == (["/tmp/new"], ["/tmp/replaced", "/tmp/rewritten"])


def test_paths_are_shown_with_home_as_tilde_and_the_hosts_log_left_out():
    home_root = "/home/mcp-install"
    assert shown_path(f"{STEP}/home/.bashrc", STEP, home_root) == "~/.bashrc"
    assert shown_path(f"{STEP}/output.log", STEP, home_root) is None
    assert shown_path("/home/mcp-install/.profile", STEP, home_root) == "~/.profile"  # the install user's home
    assert shown_path("/tmp/marker", STEP, home_root) == "/tmp/marker"


def test_paths_are_bounded_escaped_and_capped():
    created = [f"/tmp/m{i:02}" for i in range(25)]
    shown_created, shown_modified, more = bounded(created, ["/tmp/old"], limit=20)
    assert len(shown_created) == 20 and shown_modified == () and more == 6
    hostile = "/tmp/\x1b[31mred\n\u202e" + "x" * 1000
    (escaped,), _, _ = bounded([hostile], [])
    assert "\x1b" not in escaped and "\n" not in escaped and "\u202e" not in escaped
    assert escaped.startswith("/tmp/\\x1b[31mred") and len(escaped) == 300


class _FakeContainer:
    """Answers the watch's commands like the install container would: the roots, then one listing per call."""

    def __init__(self, *listings: tuple[bytes, bytes]) -> None:
        self.listings = list(listings)
        self.commands: list[list[str]] = []

    def __call__(self, command: list[str]) -> tuple[bytes, bytes]:
        self.commands.append(command)
        if command[4:] == ROOTS_COMMAND:
            return b"/tmp\0/home/mcp-install\0/opt/server\0", b"exit:1 other:0"
        return self.listings.pop(0)


def test_a_step_is_charged_with_what_it_wrote_outside_its_scratch_and_the_installers_own_files():
    plan = WatchPlan(own_paths=("~/.cache/uv/*", "/tmp/requested.txt"), unwatched=("~/.cache/uv/archive-v*",),
                     evidence=("~/.cache/uv/sdists-v*/pypi/*/src/setup.py",))
    before = _listing(("1", "1.0", "f", "/tmp/requested.txt"), ("2", "1.0", "f", "/tmp/old"))
    after = _listing(("1", "2.0", "f", "/tmp/requested.txt"), ("2", "1.0", "f", "/tmp/old"),
                     ("3", "2.0", "f", "/tmp/marker"), ("4", "2.0", "f", f"{STEP}/output.log"),
                     ("5", "2.0", "f", f"{STEP}/home/.bashrc"),
                     ("6", "2.0", "f", f"{STEP}/home/.cache/uv/sdists-v11/pypi/x/1/id/src/setup.py"))
    container = _FakeContainer((before, b"0\n"), (after, b"2\n"))
    watch = WriteWatch(container, plan, "/home/mcp-install")
    watch.start()
    assert watch.roots == ("/home/mcp-install", "/tmp")
    writes = watch.after_step(STEP, "/tmp/step-0123")
    assert writes.created == ("~/.bashrc", "/tmp/marker") and writes.modified == ()
    assert writes.unreadable == 2 and not writes.truncated and writes.wrote
    assert writes.evidence == ("~/.cache/uv/sdists-v*/pypi/*/src/setup.py",)
    listing = container.commands[-1]
    assert listing[:2] == ["sh", "-c"] and "/tmp/step-0123" in listing  # the step's TMPDIR is pruned, not listed
    assert f"{STEP}/home/.cache/uv/archive-v*" in listing
    # The step's HOME is gone after it: the next step's "before" does not hold it.
    assert all(not path.startswith(STEP) for path in watch._before)


def test_the_steps_folders_are_removed_in_the_listings_exec_after_the_listing():
    container = _FakeContainer((b"", b"0"), (_listing(("1", "1.0", "f", "/tmp/marker")), b"0"))
    watch = WriteWatch(container, WatchPlan(), "/home/mcp-install")
    watch.start()
    removal = f"rm -rf -- {STEP}"
    writes = watch.after_step(STEP, "/tmp/step-0123", then=removal)
    assert writes.created == ("/tmp/marker",)  # the listing's output is read as before
    command = container.commands[-1]
    script = command[2]
    assert command[:2] == ["sh", "-c"] and script.startswith(LISTING_SCRIPT) and script.endswith(f"; {removal}")
    assert len(container.commands) == 3  # the roots, the first listing, then one exec for the listing and removal


def test_the_merged_exec_lists_then_removes_in_a_real_shell(tmp_path):
    """The listing script and the removal composed as the install container runs them (`sh -c`, GNU find), here on a
    folder of this host: the listing's protocol (entries on stdout, the unreadable count on stderr) is untouched by
    the removal after it, which leaves none of the step's folders."""
    root, tmp = tmp_path / "root", tmp_path / "tmp"
    root.mkdir(), tmp.mkdir()
    step, scratch = root / "step-0123", tmp / "step-0123"
    (step / "home").mkdir(parents=True), scratch.mkdir()
    (step / "home" / ".bashrc").write_text("evil")
    (scratch / "ignored").write_text("scratch")

    def run(command: list[str]) -> tuple[bytes, bytes]:
        done = subprocess.run(command, capture_output=True, check=False, timeout=30)
        return done.stdout, done.stderr

    watch = WriteWatch(run, WatchPlan(), str(root))
    watch.roots = (str(root), str(tmp))
    runner = StepRunner(None, "unused", user="x", environment={}, deadline=0.0, home_root=str(root),
                        tmp_root=str(tmp))
    (root / "marker").write_text("written by the step")
    writes = watch.after_step(str(step), str(scratch), then=runner._removal_script([str(step), str(scratch)]))
    assert set(writes.created) == {"~/.bashrc", "~/marker"} and writes.unreadable == 0 and not writes.truncated
    assert not step.exists() and not scratch.exists() and (root / "marker").exists()


def test_the_install_is_not_committed_while_a_process_of_it_runs():
    """Committed without a stop only because nothing of the install runs: a leftover the steps' own checks missed
    (a bug) stops the install instead, before the manifest or the proxy is read."""

    class Leftover:
        def leftovers(self) -> list[dict[str, str]]:
            return [{"pid": "42", "stat": "S", "uid": "10001"}]

    with pytest.raises(SandboxError, match="still runs a process of the install"):
        install._finished_install(None, "unused", "npm", None, [], Leftover())  # type: ignore[arg-type]


def test_with_nothing_writable_to_list_the_removal_still_runs():
    commands: list[list[str]] = []

    def nothing_writable(command: list[str]) -> tuple[bytes, bytes]:
        commands.append(command)
        return b"", b""

    watch = WriteWatch(nothing_writable, WatchPlan(), "/home/mcp-install")
    watch.start()
    assert watch.roots == ()
    assert not watch.after_step(STEP, "/tmp/step-0123", then="rm -rf -- /tmp/step-0123").wrote
    assert commands[-1] == ["sh", "-c", "rm -rf -- /tmp/step-0123"]
    assert not watch.after_step(STEP, "/tmp/step-0123").wrote  # nothing to list, nothing to run: no exec
    assert len(commands) == 2


def test_a_listing_cut_at_its_cap_makes_the_record_incomplete():
    container = _FakeContainer((b"", b"0"), (b"x" * MAX_LISTING_BYTES, b"0"))
    watch = WriteWatch(container, WatchPlan(), "/home/mcp-install")
    watch.start()
    writes = watch.after_step(STEP, "/tmp/step-0123")
    assert writes.truncated and writes.wrote


def test_an_install_step_that_wrote_nothing_outside_has_no_record():
    container = _FakeContainer((b"", b"0"), (_listing(("1", "1.0", "f", f"{STEP}/output.log")), b"0"))
    watch = WriteWatch(container, WatchPlan(), "/home/mcp-install")
    watch.start()
    assert not watch.after_step(STEP, "/tmp/step-0123").wrote


class _FakeRunner:
    """A StepRunner that returns canned writes per step, with an engine clock that always moves on."""

    def __init__(self, *writes: StepWrites | None) -> None:
        self.writes = list(writes)
        self.now = 100.0

    def engine_now(self) -> float:
        self.now += 1
        return self.now

    def run(self, command: list[str]) -> StepResult:
        return StepResult(0, "", self.writes.pop(0))


def test_install_steps_name_each_record_like_its_window_also_when_relabelled():
    marker = StepWrites(created=("/tmp/marker",))
    steps = install_phases.InstallSteps(_FakeRunner(marker, StepWrites(), marker, StepWrites(modified=("~/.x",))),
                                        "x@1")
    steps.run(["resolve"], package=None, script="resolve")
    steps.relabel(None, "resolve; build backends may run for metadata: a@1")
    steps.run(["clean"], package="clean@1", script="postinstall")
    steps.run(["opt"], package="opt@1", script="postinstall")
    steps.run_in_window(["rm"])  # the same window: merged into its record
    assert [(w.package, w.script, w.created, w.modified) for w in steps.writes] == [
        (None, "resolve; build backends may run for metadata: a@1", ("/tmp/marker",), ()),
        ("opt@1", "postinstall", ("/tmp/marker",), ("~/.x",))]


# ------------------------------------------------------------------------------------------ the rule I11 (unit)


@pytest.mark.parametrize(("path", "severity", "label"), [
    ("~/.bashrc", "error", "shell start-up file"),
    ("~/.config/autostart/x.desktop", "error", "autostart entry"),
    ("~/.ssh/authorized_keys", "error", "ssh access"),
    ("~/.npmrc", "error", "package-manager config"),
    ("~/.local/bin/git", "error", "executable on PATH"),
    ("~/.local/lib/python3.13/site-packages/evil.pth", "error", "Python user site"),
    ("~/.cursor/mcp.json", "error", "MCP client config"),
    ("~/.mcp-zoo-marker", "warning", None),
    ("/tmp/marker", "warning", None),
    ("/tmp/x/evil.pth", "warning", None),  # a scratch folder: nothing there runs by itself
    ("/var/tmp/.hidden", "warning", None),
    ("/dev/shm/x", "warning", None),
])
def test_places_are_classified_by_what_a_write_there_does(path, severity, label):
    assert place(path) == (severity, label)


def test_one_finding_per_step_naming_it_and_its_paths_persistence_first():
    found = step_finding(InstallStepWrites(package="evil@1.0.0", script="postinstall",
                                           created=["/tmp/.evil-ran", "~/.bashrc"], more=3))
    assert found is not None and found.rule_id == "I11" and found.severity == "error"
    assert found.message == ("install script postinstall of evil@1.0.0 wrote outside the install tree: "
                             "~/.bashrc (shell start-up file), /tmp/.evil-ran, and 3 more")
    marker = step_finding(InstallStepWrites(package=None, script="uv pip install of the local target",
                                            created=["/tmp/marker"], unreadable=1))
    assert marker is not None and marker.severity == "warning"
    assert marker.message == ("uv pip install of the local target wrote outside the install tree: /tmp/marker, "
                              "1 folder it made unreadable")


def test_a_step_without_writes_outside_gives_no_finding():
    assert write_findings([InstallStepWrites(package="clean@1", script="postinstall")]) == []


def test_the_report_charges_an_unnamed_step_to_the_installed_package_and_escapes_paths():
    installed = install.InstalledServer(
        image="i", image_id="sha256:1", runtime_image="r", cached=False, name="pkg", version="1.0", entry_points={},
        installer_output="", seconds=1.0, manifest={},
        writes=[StepWrites(created=("/tmp/\x1b[2Jx",), package=None, script=None)])
    (record,) = install_info(installed, ["pkg"]).writes
    assert record.package == "pkg@1.0" and "\x1b" not in record.created[0]
    assert step_writes(installed) == [record]


def test_a_cached_install_reports_the_writes_the_first_did():
    record = StepWrites(created=("/tmp/m",), modified=("~/.x",), more=2, unreadable=1, package="a@1",
                        script="postinstall")
    summary = dataclasses.asdict(record)
    assert cached._step_writes(summary) == record


# ---------------------------------------------------------------------------------- setup.py at install (unit)


def test_setup_py_is_read_from_the_users_copy_of_a_local_target(tmp_path):
    assert local_setup_py(SERVERS / "pypi-setup-marker") is True
    assert local_setup_py(SERVERS / "zoo") is False  # pyproject.toml only: a build backend, no setup.py
    sdist = tmp_path / "pkg-1.0.tar.gz"
    with tarfile.open(sdist, "w:gz") as tar:
        tar.add(SERVERS / "pypi-setup-marker" / "setup.py", arcname="pkg-1.0/setup.py")
    assert local_setup_py(sdist) is True
    deep = tmp_path / "deep-1.0.tar.gz"
    with tarfile.open(deep, "w:gz") as tar:
        tar.add(SERVERS / "pypi-setup-marker" / "setup.py", arcname="deep-1.0/tests/data/setup.py")
    assert local_setup_py(deep) is False
    assert local_setup_py(tmp_path / "pkg-1.0-py3-none-any.whl") is None  # a wheel is not built
    assert local_setup_py(None) is None


def test_a_build_is_an_install_script_record_and_an_i5_finding():
    report, findings = check_installed("pypi", "mcp-zoo-setup-marker", "0.1.0", local=True, manifest=None,
                                       client=None, built=[BuiltFromSource(package=None, setup_py=True),
                                                           BuiltFromSource(package="dep@2", setup_py=False)])
    assert report.install_scripts == [
        "mcp-zoo-setup-marker@0.1.0: setup.py (built from its source folder or archive: setup.py ran code at "
        "install time)",
        "dep@2: build backend (built from sdist: its build backend ran code at install time)"]
    assert [(f.rule_id, f.severity, f.message) for f in findings] == [
        ("I5", "warning", "mcp-zoo-setup-marker@0.1.0 was built from its source folder or archive: setup.py ran "
                          "code at install time."),
        ("I5", "warning", "dep@2 was built from sdist: its build backend ran code at install time.")]


def test_a_local_folder_built_by_its_declared_backend_is_recorded_but_not_an_i5():
    """The user's own folder with a pyproject.toml and no setup.py: the backend (setuptools, hatchling …) runs, none
    of the package's code does, so the build is recorded and no I5 is raised (a folder scan of a clean server stays
    a pass). A registry sdist built the same way is still an I5: the backend ran on code nobody reviewed."""
    report, findings = check_installed("pypi", "mcp-zoo", "0.1.0", local=True, manifest=None, client=None,
                                       built=[BuiltFromSource(package=None, setup_py=False)])
    assert report.install_scripts == ["mcp-zoo@0.1.0: build backend (built from its source folder or archive: its "
                                      "build backend ran code at install time)"]
    assert findings == []


def test_a_wheel_only_install_states_no_build():
    report, findings = check_installed("pypi", "pkg", "1.0", local=True, manifest=None, client=None, built=[])
    assert report.install_scripts == [] and findings == []


def test_the_pypi_watch_sees_setup_py_in_uvs_cache_but_records_none_of_the_cache():
    shown = "~/.cache/uv/sdists-v11/pypi/docopt/0.6.2/7kvgmrvz/src/setup.py"
    assert any(fnmatch.fnmatchcase(shown, p) for p in PYPI_WATCH.evidence)
    assert any(fnmatch.fnmatchcase(shown, p) for p in PYPI_WATCH.own_paths)


# ------------------------------------------------------------------------------------------------- docker tests


def _ca():
    return images.DEFAULT_CA_BUNDLE if images.DEFAULT_CA_BUNDLE.is_file() else None


@contextlib.contextmanager
def _installed(client, ecosystem, spec, name, local_path):
    """The package installed (no cache) in a session of its own, its image removed afterwards."""
    runtime = images.ensure_runtime_image(client, "node" if ecosystem == "npm" else "python")
    request = install.InstallRequest(ecosystem, spec, name, f"test:{uuid.uuid4()}", local_path=local_path,
                                     ca_bundle=_ca())
    with SandboxSession(client) as session:
        installed = install.install(session, request, runtime.tag, runtime.image_id, use_cache=False)
    assert session.teardown_result is not None and session.teardown_result.complete
    try:
        yield installed
    finally:
        client.images.remove(installed.image, force=True)


@pytest.mark.docker
def test_an_npm_postinstall_marker_in_tmp_is_charged_to_its_step_only(docker_client, script_tree, no_leftovers):
    with _installed(docker_client, "npm", f"/opt/src/{script_tree.name}", "mcp-zoo-script-tree",
                    script_tree) as installed:
        # The harmless root writes only inside its own folder (the near miss): no record for its step, nor for
        # npm's own fetch (its cache and logs in HOME are npm's).
        assert installed.writes == [StepWrites(created=("/tmp/mcp-zoo-guilty-marker",), package="mcp-zoo-guilty@0.1.0",
                                               script="postinstall")]
        (found,) = write_findings(step_writes(installed))
        assert found.severity == "warning" and found.message == (
            "install script postinstall of mcp-zoo-guilty@0.1.0 wrote outside the install tree: "
            "/tmp/mcp-zoo-guilty-marker")


@pytest.mark.docker
@pytest.mark.registry
def test_a_setup_py_writing_to_tmp_and_home_is_recorded_and_stated(docker_client, no_leftovers):
    """setuptools comes from PyPI through the install proxy; setup.py itself writes /tmp and ~/.bashrc."""
    with _installed(docker_client, "pypi", "/opt/src/pkg", "mcp-zoo-setup-marker",
                    SERVERS / "pypi-setup-marker") as installed:
        (record,) = installed.writes
        assert (record.package, record.script) == (None, install_phases.UV_LOCAL)
        assert record.created == ("~/.bashrc", "/tmp/mcp-zoo-setup-marker") and record.modified == ()
        assert installed.built == [BuiltFromSource(package=None, setup_py=True)]
        (found,) = write_findings(step_writes(installed))
        assert found.severity == "error" and found.message == (
            f"{install_phases.UV_LOCAL} wrote outside the install tree: "
            "~/.bashrc (shell start-up file), /tmp/mcp-zoo-setup-marker")
        report, findings = check_installed("pypi", installed.name, installed.version, local=True, manifest=None,
                                           client=None, built=installed.built)
        assert report.install_scripts == ["mcp-zoo-setup-marker@0.1.0: setup.py (built from its source folder or "
                                          "archive: setup.py ran code at install time)"]
        assert [f.rule_id for f in findings] == ["I5"]
        with SandboxSession(docker_client) as session:  # a cached re-scan reports the same
            cached = install.cached_install(session, installed.image, installed.runtime_image)
        assert cached is not None and cached.writes == installed.writes and cached.built == installed.built


@pytest.mark.docker
@pytest.mark.registry
def test_a_setup_py_writing_only_its_own_folder_has_no_write_record(docker_client, no_leftovers):
    with _installed(docker_client, "pypi", "/opt/src/pkg", "mcp-zoo-setup-quiet",
                    SERVERS / "pypi-setup-quiet") as installed:
        assert installed.writes == []  # uv's cache, the venv and the package's own folder are the install's
        assert installed.built == [BuiltFromSource(package=None, setup_py=True)]


def _wheel(folder):
    """A minimal pure-Python wheel of one module (no build, no setup.py: what a wheel-only install gets)."""
    path = folder / "mcp_zoo_wheel_only-0.1.0-py3-none-any.whl"
    files = {"mcp_zoo_wheel_only.py": b"def main():\n    print('installed')\n",
             "mcp_zoo_wheel_only-0.1.0.dist-info/METADATA": b"Metadata-Version: 2.1\nName: mcp-zoo-wheel-only\n"
                                                            b"Version: 0.1.0\n",
             "mcp_zoo_wheel_only-0.1.0.dist-info/WHEEL": b"Wheel-Version: 1.0\nGenerator: test\nRoot-Is-Purelib: "
                                                         b"true\nTag: py3-none-any\n",
             "mcp_zoo_wheel_only-0.1.0.dist-info/entry_points.txt": b"[console_scripts]\n"
                                                                    b"zoo-wheel-only = mcp_zoo_wheel_only:main\n"}
    record = []
    for name, data in files.items():
        digest = base64.urlsafe_b64encode(hashlib.sha256(data).digest()).rstrip(b"=").decode()
        record.append(f"{name},sha256={digest},{len(data)}")
    record.append("mcp_zoo_wheel_only-0.1.0.dist-info/RECORD,,")
    with zipfile.ZipFile(path, "w") as archive:
        for name, data in files.items():
            archive.writestr(name, data)
        archive.writestr("mcp_zoo_wheel_only-0.1.0.dist-info/RECORD", "\n".join(record) + "\n")
    return path


@pytest.mark.docker
def test_a_wheel_only_install_builds_nothing_and_writes_nothing_outside(docker_client, tmp_path, no_leftovers):
    wheel = _wheel(tmp_path)
    with _installed(docker_client, "pypi", f"/opt/src/{wheel.name}", "mcp-zoo-wheel-only", wheel) as installed:
        assert installed.version == "0.1.0"
        assert installed.built == [] and installed.writes == []


def test_builds_the_install_could_not_name_are_an_i5_that_says_so():
    """The install could not read which packages it would build (InstalledServer.built_unknown): not "nothing
    built" but an I5 and a record saying build code may have run unnamed."""
    report, findings = check_installed("pypi", "pkg", "1.0", local=True, manifest=None, client=None, built=[],
                                       built_unknown=True)
    assert len(report.install_scripts) == 1 and report.install_scripts[0].startswith("unknown: ")
    assert [(f.rule_id, f.severity) for f in findings] == [("I5", "warning")]
    assert "could not be read" in findings[0].message
