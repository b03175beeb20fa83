"""The gc sweep (a scan's, beside its install; a batch's; `mcp-sandbox gc`) against an engine that refuses a removal.

Before the fix a refusal of one dead scan's container (a 500: "device or resource busy", which the engine gives while
other containers start and stop, i.e. when scans run at once) raised out of the sweep: the rest of the dead session
stayed, `mcp-sandbox gc` ended in a traceback, and a scan whose sweep it was failed ("internal error in install")
over a leftover of another, dead scan. A network still in use and a volume still in use were passed over in silence
(the volume counted as removed). Now the sweep removes all it can and names what it could not, with the engine's
words; `gc` prints those and exits 3 (as an incomplete teardown)."""

from __future__ import annotations

import io
import json
import os
import shutil
import socket
import subprocess
import uuid
from collections.abc import Callable, Iterator
from typing import Any

import pytest
from docker.errors import APIError, NotFound

from sandbox.core import gc, images, labels
from sandbox.core import session as session_module
from tests.sandbox_helpers import REPO, labelled_containers

pytestmark = pytest.mark.docker

BUSY = "driver \"overlay2\" failed to remove root filesystem: device or resource busy"


def _dead_owner_labels(session_id: str, role: str) -> dict[str, str]:
    """The labels of a session whose scanner has exited (a real pid, reaped: its start time no longer matches)."""
    child = subprocess.Popen(["true"])
    child.wait()
    return {**labels.session_labels(session_id, role), labels.OWNER_PID: str(child.pid),
            labels.OWNER_PID_START: "1"}


@pytest.fixture
def dead_session(docker_client) -> Iterator[tuple[str, list[str], str]]:
    """A dead scan's leftovers: two running containers on its labelled network."""
    api = docker_client.api
    session_id = uuid.uuid4().hex  # named as a session names what it creates (the sweep takes nothing else)
    network = f"{session_module.name_prefix(session_id)}run-net0"
    api.create_network(network, driver="bridge", internal=True, labels=_dead_owner_labels(session_id, "run"))
    config = api.create_host_config(network_mode=network)
    image = images.image_tag("python")
    containers = [api.create_container(image, command=["sleep", "120"], host_config=config, user="10001:10001",
                                       name=f"{session_module.name_prefix(session_id)}{role}-{n}",
                                       labels=_dead_owner_labels(session_id, role))["Id"]
                  for n, role in enumerate(("sink", "run"))]
    for container in containers:
        api.start(container)
    yield session_id, containers, network
    for container in containers:
        subprocess.run(["docker", "rm", "-f", container], capture_output=True, check=False)
    subprocess.run(["docker", "network", "rm", network], capture_output=True, check=False)


def _refusing(remove: Callable[..., Any], victim: str) -> Callable[..., None]:
    def refuse(container_id: str, **kwargs: Any) -> None:
        if container_id == victim:
            raise APIError("500 Server Error", explanation=BUSY)
        remove(container_id, **kwargs)
    return refuse


def test_a_refused_removal_does_not_stop_the_sweep_and_is_named(docker_client, dead_session, monkeypatch) -> None:
    session_id, (refused, other), network = dead_session
    monkeypatch.setattr(session_module, "REMOVAL_PAUSE_SECONDS", 0.0)
    monkeypatch.setattr(docker_client.api, "remove_container",
                        _refusing(docker_client.api.remove_container, refused))
    result = gc.sweep(docker_client)
    assert other[:12] in result.containers and refused[:12] not in result.containers
    assert [c["Id"] for c in labelled_containers(docker_client, session_id)] == [refused]
    assert any(line.startswith(refused[:12]) and "device or resource busy" in line for line in result.failed)
    # Its network still holds the refused container: kept, and said.
    assert network not in result.networks
    assert any(line.startswith(network) for line in result.failed), result.failed
    monkeypatch.undo()
    result = gc.sweep(docker_client)  # the refusal passed: the next sweep removes the rest
    assert refused[:12] in result.containers and network in result.networks
    assert labelled_containers(docker_client, session_id) == []
    with pytest.raises(NotFound):
        docker_client.api.inspect_network(network)


def test_gc_prints_what_it_could_not_remove_and_exits_3(monkeypatch, capsys) -> None:
    import typer

    from sandbox.core import engine
    from scanner.cli.gc import collect_garbage

    swept = gc.SweepResult(containers=["aaaaaaaaaaaa"], failed=[f"bbbbbbbbbbbb (the engine refused: {BUSY})"])
    monkeypatch.setattr(engine, "connect", lambda: object())
    monkeypatch.setattr(gc, "sweep", lambda client, everything=False: swept)
    with pytest.raises(typer.Exit) as ended:
        collect_garbage(everything=False, cached_images=False, keep=None, older_than=None)
    assert ended.value.exit_code == 3
    out = capsys.readouterr()
    assert out.out.startswith("removed 1 containers")
    assert "could not remove bbbbbbbbbbbb (the engine refused: " in out.err


def test_a_live_scanner_in_a_container_on_the_host_network_is_not_taken_for_dead(docker_client) -> None:
    """The scanner's image run with `--network host` has the host's hostname but a pid namespace of its own: its
    pid means another process here (or none). Before the fix the host's sweep read that pid on the host, found no
    match and removed the live scan's containers; now a session of another pid namespace counts as another host's."""
    api = docker_client.api
    image = images.image_tag("python")
    script = ("import json, sys, time; from sandbox.core import labels; "
              "print(json.dumps(labels.session_labels(sys.argv[1], 'run')), flush=True); time.sleep(120)")
    session_id = f"test-{uuid.uuid4().hex}"
    scanner = subprocess.Popen(
        ["docker", "run", "--rm", "--network", "host", "--user", "10001:10001", "-v", f"{REPO}:/src:ro",
         "-e", "PYTHONPATH=/src", "--label", "io.mcp-sandbox.test=gc", "--entrypoint", "python3", image,
         "-c", script, session_id], stdout=subprocess.PIPE, text=True)
    theirs = None
    try:
        assert scanner.stdout is not None
        their_labels = json.loads(scanner.stdout.readline())
        assert their_labels[labels.OWNER_HOST] == socket.gethostname()  # --network host: the host's name
        theirs = api.create_container(image, command=["true"], labels=their_labels,
                                      name=f"{session_module.name_prefix(session_id)}run-0")["Id"]
        result = gc.sweep(docker_client)
        assert theirs[:12] not in result.containers
        assert session_id in result.kept_live_sessions
        assert api.inspect_container(theirs)["Id"] == theirs
    finally:
        if theirs is not None:
            subprocess.run(["docker", "rm", "-f", theirs], capture_output=True, check=False)
        scanner.kill()
        subprocess.run(["docker", "rm", "-f", *_test_containers()], capture_output=True, check=False)
        scanner.wait(timeout=30)


def _test_containers() -> list[str]:
    listed = subprocess.run(["docker", "ps", "-aq", "--filter", "label=io.mcp-sandbox.test=gc"],
                            capture_output=True, text=True, check=False)
    return listed.stdout.split()


HIDDEN_CHECK = ("import json, sys; from sandbox.core import labels; "
                "print(labels.owner_alive(json.loads(sys.argv[1])))")


@pytest.mark.skipif(os.geteuid() != 0 or not shutil.which("unshare") or not shutil.which("setpriv")
                    or not shutil.which("python3"),
                    reason="mounts a proc with hidepid=2 in a mount namespace of its own: needs root")
def test_a_live_scanner_of_another_user_hidden_by_hidepid_is_not_taken_for_dead() -> None:
    """/proc mounted with hidepid=2 (a hardened multi-user host) hides other users' processes: before the fix one
    user's sweep found no /proc entry for another user's live scanner and removed its containers. The check runs
    here as another user (nobody, the system's python3: labels.py needs only the standard library) under such a
    /proc; the scanner is this test's `sleep`, owned by root."""
    scanner = subprocess.Popen(["sleep", "120"])
    try:
        owner = {**labels.session_labels("test-hidden", "run"), labels.OWNER_PID: str(scanner.pid),
                 labels.OWNER_PID_START: labels.process_start_ticks(scanner.pid) or ""}
        check = (f"mount -t proc -o hidepid=2 proc /proc && exec setpriv --reuid 65534 --regid 65534 --clear-groups "
                 f"env PYTHONPATH={REPO} python3 -c \"$0\" \"$1\"")
        answer = subprocess.run(["unshare", "-m", "--propagation", "private", "sh", "-c", check, HIDDEN_CHECK,
                                 json.dumps(owner)], capture_output=True, text=True, timeout=60, check=False)
        assert answer.stdout.strip() == "True", answer.stderr
        scanner.kill()
        scanner.wait()
        answer = subprocess.run(["unshare", "-m", "--propagation", "private", "sh", "-c", check, HIDDEN_CHECK,
                                 json.dumps(owner)], capture_output=True, text=True, timeout=60, check=False)
        assert answer.stdout.strip() == "False", answer.stderr  # gone: its leftovers are swept
    finally:
        scanner.kill()
        scanner.wait()


def test_a_creation_label_that_is_no_number_neither_stops_the_sweep_nor_is_swept(docker_client) -> None:
    """A container labelled with a session of another host whose creation time is no number (labels not written by
    a scanner). Before the fix the sweep raised ValueError on it: every later scan failed ("internal error in
    install") and `gc` with it, until the container went. Now its age cannot be told, so it counts as a live
    session's and is left alone. (It is named as a session's: a container that is not is passed over before its
    labels are read.)"""
    api = docker_client.api
    session_id = f"test-{uuid.uuid4().hex}"
    inherited = {labels.SESSION: session_id, labels.OWNER_HOST: "elsewhere.invalid", labels.CREATED: "soon",
                 "io.mcp-sandbox.test": "gc"}
    theirs = api.create_container(images.image_tag("python"), command=["true"], labels=inherited,
                                  name=f"{session_module.name_prefix(session_id)}run-0")["Id"]
    try:
        result = gc.sweep(docker_client)
        assert theirs[:12] not in result.containers
        assert session_id in result.kept_live_sessions
        assert api.inspect_container(theirs)["Id"] == theirs
    finally:
        subprocess.run(["docker", "rm", "-f", theirs], capture_output=True, check=False)


def test_a_container_run_by_hand_from_an_image_with_a_dead_sessions_labels_is_not_swept(docker_client) -> None:
    """`docker commit` of a scan's container (or an installed image cached before its session labels were cleared, or
    an image whose author wrote them) carries a dead session's labels, and a container run from it by hand gets
    them. Before the fix the next scan's sweep took it for that session's leftover: killed and removed it, with its
    anonymous volumes. Now the sweep takes only what is named as the session names what it creates."""
    api = docker_client.api
    session_id = uuid.uuid4().hex
    tag = f"mcp-sandbox-test-committed:{session_id[:12]}"
    built, _ = docker_client.images.build(fileobj=io.BytesIO(f"FROM {images.image_tag('python')}\n".encode()),
                                          tag=tag, rm=True, labels=_dead_owner_labels(session_id, "run"))
    theirs = api.create_container(tag, command=["sleep", "120"], user="10001:10001",
                                  labels={"io.mcp-sandbox.test": "gc"})["Id"]
    named = api.create_container(tag, command=["true"], name=f"{session_module.name_prefix(session_id)}run-0")["Id"]
    try:
        api.start(theirs)
        result = gc.sweep(docker_client)
        assert theirs[:12] not in result.containers
        assert api.inspect_container(theirs)["State"]["Running"] is True
        assert named[:12] in result.containers  # the dead session's own container (named by it) is still swept
    finally:
        subprocess.run(["docker", "rm", "-f", theirs, named], capture_output=True, check=False)
        subprocess.run(["docker", "rmi", "-f", built.id], capture_output=True, check=False)


def test_a_pid_label_past_a_c_long_is_no_process() -> None:
    """A pid label no scanner wrote (too large for the kernel's pid type) on this host: before the fix signal 0 raised
    OverflowError out of owner_alive, so the sweep, and with it every scan here and `gc`, failed until the resource
    went. It names no process: the session is dead."""
    theirs = {labels.SESSION: "test-overflow", labels.OWNER_HOST: socket.gethostname(),
              labels.OWNER_PID: "9" * 20, labels.OWNER_PID_START: "1"}
    assert labels.owner_alive(theirs) is False
