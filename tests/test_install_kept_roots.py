"""The install container's writable places, found once for a runtime image and kept (sandbox/install/kept_roots.py).

Unit tests cover the key (what moves it and what does not), the kept entry (read back as written, refused when it is
not what was written) and the write watch taking kept places instead of finding them. The docker test installs the
same package twice with a state folder of its own: the second install takes the places the first found, runs no
`find /`, and records the same write outside the install tree.
"""

from __future__ import annotations

import copy
import subprocess

import pytest
from docker.errors import APIError

from sandbox.core.image_reads import ReadStore, StoredRead
from sandbox.install import kept_roots as kept_module
from sandbox.install.kept_roots import BLOB, KeptRoots, kept_roots, roots_key
from sandbox.install.steps import StepRunner
from sandbox.install.writes import (ROOTS_ARGV0, ROOTS_COMMAND, ROOTS_SCRIPT, WHOLE_FIND, StepWrites, WatchPlan,
                                    WriteWatch)
from tests.test_install_egress import script_tree  # noqa: F401  (the packed npm script tree)
from tests.test_install_writes import _installed

CONTAINER = {
    "Image": "sha256:" + "a" * 64,
    "Config": {"User": "10002:10002", "WorkingDir": "/opt/server", "Labels": {"io.mcp-sandbox.session": "s1"}},
    "HostConfig": {"NetworkMode": "mcp-sandbox-s1-install-net0", "Dns": ["172.18.0.2"], "ReadonlyRootfs": False,
                   "Tmpfs": {"/tmp": "rw,nosuid,nodev,size=1g,mode=1777"}, "CapDrop": ["ALL"]},
}
ENGINE = {"ServerVersion": "20.10.24", "KernelVersion": "6.1.0", "Driver": "overlay2",
          "SecurityOptions": ["name=seccomp,profile=default"], "SystemTime": "2026-12-07T19:00:00Z"}
TREE = ("/opt/server", "/opt/src")


def _key(container=CONTAINER, engine=ENGINE, tree=TREE, local=False):
    return roots_key(container, engine, tree, local)


def _changed(path, value):
    changed = copy.deepcopy(CONTAINER)
    node = changed
    for part in path[:-1]:
        node = node[part]
    node[path[-1]] = value
    return changed


# ------------------------------------------------------------------------------------------------------ the key


def test_the_key_leaves_out_the_network_its_dns_the_labels_and_the_engines_clock():
    other_install = _changed(("HostConfig", "NetworkMode"), "mcp-sandbox-s2-install-net0")
    other_install["HostConfig"]["Dns"] = ["172.19.0.2"]
    other_install["Config"]["Labels"] = {"io.mcp-sandbox.session": "s2"}
    assert _key(other_install, {**ENGINE, "SystemTime": "2026-12-07T20:00:00Z"}) == _key()


@pytest.mark.parametrize("changed", [
    _changed(("HostConfig", "Tmpfs"), {"/tmp": "rw,size=1g,mode=1777", "/var/scratch": "rw,mode=1777"}),
    _changed(("HostConfig", "Binds"), ["/etc/ssl/certs/ca.pem:/etc/ssl/certs/ca-certificates.crt:ro"]),
    _changed(("HostConfig", "ReadonlyRootfs"), True),
    _changed(("Config", "User"), "10001:10001"),
    _changed(("Config", "WorkingDir"), "/"),
])
def test_the_key_moves_with_the_containers_user_folder_and_host_configuration(changed):
    assert _key(changed) != _key()


@pytest.mark.parametrize("field", ["ServerVersion", "KernelVersion", "Driver", "SecurityOptions"])
def test_the_key_moves_with_the_engine(field):
    assert _key(engine={**ENGINE, field: "other"}) != _key()


def test_the_key_moves_with_the_install_tree_and_a_local_target():
    assert _key(tree=("/opt/server",)) != _key()
    assert _key(local=True) != _key()


def test_the_key_moves_with_its_version(monkeypatch):
    before = _key()
    monkeypatch.setattr(kept_module, "KEY_VERSION", kept_module.KEY_VERSION + 1)
    assert _key() != before


# ------------------------------------------------------------------------------------------------ the kept entry


def _kept(tmp_path, image_id=CONTAINER["Image"]):
    return KeptRoots(ReadStore(tmp_path / "install-roots.sqlite"), image_id, _key())


def test_kept_places_read_back_as_written_for_the_same_image_only(tmp_path):
    roots = ("/dev/mqueue", "/dev/shm", "/home/mcp-install", "/run/lock", "/tmp", "/var/tmp")
    assert _kept(tmp_path).load() is None
    _kept(tmp_path).keep(roots)
    assert _kept(tmp_path).load() == roots
    assert _kept(tmp_path, image_id="sha256:" + "b" * 64).load() is None  # another runtime image
    empty = KeptRoots(ReadStore(tmp_path / "install-roots.sqlite"), CONTAINER["Image"], "nothing-writable")
    empty.keep(())
    assert empty.load() == ()  # nothing writable is an answer too


@pytest.mark.parametrize(("data", "count"), [
    (b"/tmp\0/var/tmp", 3),  # not as many as counted
    (b"/tmp\0var/tmp", 2),  # a relative path
    (b"/tmp\0\0/var/tmp", 3),  # an empty one
])
def test_an_entry_that_is_not_what_was_written_is_as_if_absent(tmp_path, data, count):
    kept = _kept(tmp_path)
    assert kept.store.save(kept.image_id, kept.key, StoredRead({BLOB: data}, {"count": count}))
    assert kept.load() is None


class _Engine:
    def __init__(self, container=CONTAINER, fail=False):
        self.container, self.fail = container, fail

    def inspect_container(self, container_id):
        if self.fail:
            raise APIError("the engine refused")
        return self.container

    def info(self):
        return ENGINE


def test_the_keeping_place_is_the_containers_image_and_key(tmp_path):
    found = kept_roots(_Engine(), "c1", TREE, local=False, path=tmp_path / "roots.sqlite")
    assert found is not None and (found.image_id, found.key) == (CONTAINER["Image"], _key())


@pytest.mark.parametrize("engine", [_Engine(fail=True), _Engine(container={"Config": {}})])
def test_no_keeping_place_when_the_engine_does_not_describe_the_container(tmp_path, engine):
    assert kept_roots(engine, "c1", TREE, local=False, path=tmp_path / "roots.sqlite") is None


# ------------------------------------------------------------------------------------------ the watch's start


class _Shell:
    """Records each command the watch runs; answers the roots find with `listing` and find's exit `status` on stderr,
    anything else with nothing."""

    def __init__(self, listing=b"/tmp\0/var/tmp\0/home/mcp-install\0/opt/server\0", status=b"exit:1 other:0"):
        self.listing, self.status, self.commands = listing, status, []

    def __call__(self, command):
        self.commands.append(command)
        return (self.listing, self.status) if command[4:] == ROOTS_COMMAND else (b"", b"0")


def _watch(shell):
    return WriteWatch(shell, WatchPlan(), "/home/mcp-install")


def test_the_watch_finds_the_places_when_none_are_kept():
    shell = _Shell()
    watch = _watch(shell)
    assert watch.start() == ("/home/mcp-install", "/tmp", "/var/tmp") and watch.found_whole
    assert shell.commands[0][:4] == ["sh", "-c", ROOTS_SCRIPT, ROOTS_ARGV0] and len(shell.commands) == 2


@pytest.mark.parametrize(("listing", "status"), [
    (b"/tmp\0/var/tmp\0/home/mcp-install\0", b"exit:137 other:0"),  # find killed
    (b"/tmp\0/var/tmp\0/home/mcp-install\0", b""),  # the shell gone before it could say
    (b"/tmp\0/var/tmp\0/home/mcp-install\0", b" other:0"),  # find's status never came
    (b"/tmp\0/var/tmp\0/home/mcp-install\0", b"exit:1 other:1"),  # an error that was no folder refused
    (b"/tmp\0/var/tmp\0", b"exit:0 other:0"),  # a walk that never saw the install user's own home
])
def test_places_found_by_a_find_that_did_not_run_to_its_end_are_not_to_be_kept(listing, status):
    watch = _watch(_Shell(listing, status))
    watch.start()
    assert not watch.found_whole


def test_the_roots_script_reports_finds_end_in_a_real_shell(tmp_path):
    """The script as the container's shell runs it: find's listing alone on stdout, `exit:N other:M` alone on stderr;
    an error that is not a refusal to read a folder counts as other."""
    (tmp_path / "a").mkdir()
    def run(*roots):
        done = subprocess.run(["sh", "-c", ROOTS_SCRIPT, ROOTS_ARGV0, "find", *roots, "-print0"], capture_output=True,
                              check=False)
        return done.stdout, done.stderr
    listing, status = run(str(tmp_path))
    assert listing.split(b"\0")[:-1] == [str(tmp_path).encode(), str(tmp_path / "a").encode()]
    assert status in WHOLE_FIND
    listing, status = run(str(tmp_path), str(tmp_path / "gone"))
    assert status == b"exit:1 other:1" and str(tmp_path / "a").encode() in listing


def test_the_watch_takes_kept_places_and_lists_them_without_finding():
    shell = _Shell()
    watch = _watch(shell)
    assert watch.start(("/dev/shm", "/tmp")) == ("/dev/shm", "/tmp") and watch.roots == ("/dev/shm", "/tmp")
    (listing,) = shell.commands
    assert listing[4:] != ROOTS_COMMAND and listing[4:6] == ["/dev/shm", "/tmp"] and not watch.found_whole


class _IdleContainer:
    """The engine calls StepRunner.start makes, answered as for an idle install container; its execs by `shell`."""

    def __init__(self, shell):
        self.shell, self.execs = shell, {}

    def start(self, container_id):
        pass

    def top(self, container_id, ps_args):
        return {"Titles": ["PID", "STAT", "UID"], "Processes": [["1", "Ss", "10002"]]}

    def exec_create(self, container_id, command, **kwargs):
        self.execs[str(len(self.execs))] = command
        return {"Id": str(len(self.execs) - 1)}

    def exec_start(self, exec_id, demux=False):
        return self.shell(self.execs[exec_id])


def _started(shell, kept):
    runner = StepRunner(_IdleContainer(shell), "c1", user="10001:10001", environment={}, deadline=0.0,
                        home_root="/home/mcp-install", watch=WatchPlan())
    runner.start(kept)
    return runner


def test_the_runner_keeps_places_found_whole_and_only_those(tmp_path):
    _started(_Shell(status=b"exit:137 other:0"), _kept(tmp_path))
    assert _kept(tmp_path).load() is None
    _started(_Shell(), _kept(tmp_path))
    assert _kept(tmp_path).load() == ("/home/mcp-install", "/tmp", "/var/tmp")
    shell = _Shell()
    _started(shell, _kept(tmp_path))
    assert all(command[4:] != ROOTS_COMMAND for command in shell.commands)


# ------------------------------------------------------------------------------------------------- docker test


@pytest.mark.docker
def test_a_second_install_takes_the_places_the_first_found_and_records_the_same_write(
        docker_client, script_tree, tmp_path, monkeypatch, no_leftovers):
    monkeypatch.setenv("MCP_SANDBOX_STATE_DIR", str(tmp_path / "state"))
    commands: list[list[str]] = []
    run_captured = StepRunner._run_captured

    def recorded(self, command, user=None):
        commands.append(list(command))
        return run_captured(self, command, user)
    monkeypatch.setattr(StepRunner, "_run_captured", recorded)
    marker = [StepWrites(created=("/tmp/mcp-zoo-guilty-marker",), package="mcp-zoo-guilty@0.1.0",
                         script="postinstall")]
    writes = []
    for _ in range(2):
        with _installed(docker_client, "npm", f"/opt/src/{script_tree.name}", "mcp-zoo-script-tree",
                        script_tree) as installed:
            writes.append(installed.writes)
        commands.append(["-- next install --"])
    cut = commands.index(["-- next install --"])
    finds = [[command[3] == ROOTS_ARGV0 for command in part if len(command) > 3] for part in (commands[:cut],
                                                                                              commands[cut + 1:])]
    assert sum(finds[0]) == 1  # found in the first install's container
    assert sum(finds[1]) == 0  # taken from the state folder in the second's
    assert (tmp_path / "state" / kept_module.FILE_NAME).is_file()
    assert writes == [marker, marker]


def test_kept_places_without_the_install_home_are_not_taken(tmp_path):
    """A whole find always sees the install user's home, and only a whole find is kept: an entry without it was not
    written by the install (a state file edited by hand) and is found again."""
    _kept(tmp_path).keep(("/tmp",))
    shell = _Shell()
    _started(shell, _kept(tmp_path))
    assert any(command[4:] == ROOTS_COMMAND for command in shell.commands)
    assert _kept(tmp_path).load() == ("/home/mcp-install", "/tmp", "/var/tmp")  # kept again, whole
