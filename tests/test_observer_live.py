"""The in-sandbox observer on real containers (docs/observer.md): it starts in both runtime images, its snapshot is
the exec path's, a process of the server's uid and group can neither open its fds nor read its memory nor ptrace
it, an image without python3 falls back to the exec path; and on real scans, a server that SIGKILLs or SIGSTOPs it
is noted and still watched (one exec per look), one that tries to write fake records into its stdout fails and the
snapshot is the true one, and a scan finds the same as with the exec path."""

from __future__ import annotations

import ast
import io
import tarfile
import time

import pytest

from sandbox.core import images
from sandbox.core.session import SandboxSession
from sandbox.run import observe, server as run
from sandbox.run.exec_stream import EXEC_USER
from sandbox.run.observer import Observer, start_observer
from sandbox.run.observer_watch import watch
from sandbox.run.policy import RunPolicy, WORKSPACE
from scanner.pipeline.inventory import Timeouts
from scanner.pipeline.scan import ScanOptions, run_scan
from scanner.probes.runner import ProbeOptions
from scanner.report.model import Report
from tests.sandbox_helpers import ZOO

pytestmark = pytest.mark.docker

# As the server: its uid and group. Each way into the observer, and what the kernel said.
ATTACK = """
import ctypes, errno, os, sys
pid = int(sys.argv[1])
said = {}
for name, path, flags in (("fd1", f"/proc/{pid}/fd/1", os.O_WRONLY), ("fd0", f"/proc/{pid}/fd/0", os.O_RDONLY),
                          ("mem", f"/proc/{pid}/mem", os.O_RDONLY)):
    try:
        os.close(os.open(path, flags)); said[name] = "ok"
    except OSError as exc:
        said[name] = errno.errorcode[exc.errno]
libc = ctypes.CDLL(None, use_errno=True)
said["ptrace"] = "ok" if libc.ptrace(16, pid, None, None) == 0 else errno.errorcode[ctypes.get_errno()]
print(repr(said))
"""


def _tree() -> bytes:
    """A workspace tree with the kinds find prints and names that are hard to quote."""
    buffer = io.BytesIO()
    with tarfile.open(fileobj=buffer, mode="w") as archive:
        for name, kind, mode in (("a", tarfile.DIRTYPE, 0o755), ("a/b", tarfile.DIRTYPE, 0o700),
                                 ("a/f.txt", tarfile.REGTYPE, 0o644), ("a/tab\there", tarfile.REGTYPE, 0o600),
                                 ("a/new\nline", tarfile.REGTYPE, 0o640), ("a/b/x", tarfile.REGTYPE, 0o604),
                                 ("a/link", tarfile.SYMTYPE, 0o777), ("a/fifo", tarfile.FIFOTYPE, 0o644)):
            info = tarfile.TarInfo(name)
            info.type, info.mode, info.mtime = kind, mode, 1_000_000_000
            data = b"hello" if kind == tarfile.REGTYPE else b""
            info.size = len(data)
            if kind == tarfile.SYMTYPE:
                info.linkname = "/etc/passwd"
            archive.addfile(info, io.BytesIO(data))
    return buffer.getvalue()


@pytest.fixture(params=["python", "node"])
def sandbox(request, docker_client, no_leftovers):
    image = images.ensure_runtime_image(docker_client, request.param).tag
    with SandboxSession(docker_client) as session:
        server = run.start_server(session, image, ["sleep", "300"], RunPolicy())
        observe.extract_tar(docker_client, server.container_id, _tree(), WORKSPACE)
        yield docker_client, server.container_id


def _as_server(client, container_id: str, script: str, *args: str) -> str:
    exec_id = client.api.exec_create(container_id, ["python3", "-c", script, *args], user=EXEC_USER)["Id"]
    return client.api.exec_start(exec_id).decode()


def test_the_observer_is_protected_and_sees_what_the_exec_sees(sandbox):
    client, container_id = sandbox
    started = start_observer(client, container_id)
    assert isinstance(started, Observer), started
    try:
        pid = _observer_pid(client, container_id)
        said = ast.literal_eval(_as_server(client, container_id, ATTACK, str(pid)).strip())
        assert said == {"fd1": "EACCES", "fd0": "EACCES", "mem": "EACCES", "ptrace": "EPERM"}, said
        by_exec, by_observer = observe.snapshot(client, container_id), started.snapshot()
        assert by_exec.failure is None and by_observer.failure is None, (by_exec.failure, by_observer.failure)
        assert _without_dir_atimes(by_observer) == _without_dir_atimes(by_exec)
        assert {"/workspace/a/tab\there", "/workspace/a/new\nline", "/workspace/a/fifo"} <= set(by_observer.files)
        assert by_observer.files["/workspace/a/b/x"].mode == "604" and by_observer.files["/workspace/a/b"].mode == "700"
        assert by_observer.files["/workspace/a/link"].kind == "l"
        assert by_observer.counters.memory_bytes and by_observer.counters.pids  # the cgroup counters are read
        assert {name for name, value in vars(by_observer.counters).items() if value is None} \
            == {name for name, value in vars(by_exec.counters).items() if value is None} - {"wait_seconds"}
        # the run-queue wait needs state between looks, which only the observer keeps: the exec path has none
        assert by_observer.counters.wait_seconds is not None and by_exec.counters.wait_seconds is None
    finally:
        started.close()


def _observer_pid(client, container_id: str) -> int:
    """The observer's pid inside the container, found as a hostile server would (its command line)."""
    listing = _as_server(client, container_id, "import os\nfor p in os.listdir('/proc'):\n if p.isdigit() and int(p) != os.getpid():\n"
                         "  c = open(f'/proc/{p}/cmdline','rb').read()\n"
                         "  print(p) if b'@@MCP-SANDBOX-OBSERVER@@' in c and b'python3' in c[:8] else None")
    pids = [int(line) for line in listing.split()]
    assert len(pids) == 1, listing
    return pids[0]


def _without_dir_atimes(snapshot: observe.Snapshot) -> dict:
    """Each look lists HOME's directories, which moves their atime (strictatime): files are compared whole."""
    return {path: (e.kind, e.size, e.mtime, e.mode, e.atime if e.kind != "d" else None)
            for path, e in snapshot.files.items()}


def test_an_image_without_python3_falls_back_to_the_exec_path(docker_client, no_leftovers):
    with SandboxSession(docker_client) as session:
        server = run.start_server(session, "debian:trixie-slim", ["sleep", "300"], RunPolicy())
        looking = watch(docker_client, server.container_id)
        assert looking.observer is None and looking.unavailable and "could not start" in looking.unavailable
        assert looking.snapshot().failure is None
        assert looking.path().startswith("exec (the observer could not start")


# ---- scans -------------------------------------------------------------------------------------------------------------

def scan(command: str, observer: bool = True) -> Report:
    report = run_scan(ScanOptions(target=str(ZOO), command=command, timeouts=Timeouts(startup=30, request=15),
                                  probes=ProbeOptions(timeout=30.0, observer=observer, error_probes=False)))
    assert report.sandbox.teardown.complete
    return report


def _refresh(report: Report):
    return next(b for b in report.behavior if b.tool == "refresh_index")


def _lost_notes(report: Report) -> list[str]:
    return [e for e in report.errors if "observer was lost" in e]


def test_a_server_that_kills_the_observer_is_noted_and_still_watched(no_leftovers):
    report = scan("zoo-observer-killer")
    record = _refresh(report)
    assert record.observed and record.files.created == ["/workspace/index-refreshed.txt"]
    [note] = _lost_notes(report)
    assert "refresh_index" in note and "stream ended" in note and "137" in note, note
    assert report.sandbox.looks[0].startswith("observer, then exec (the observer's stream ended")


def test_a_server_that_stops_the_observer_does_not_hang_the_scan(no_leftovers):
    began = time.monotonic()
    report = scan("zoo-observer-stopper")
    assert time.monotonic() - began < 120
    record = _refresh(report)
    assert record.observed and record.files.created == ["/workspace/index-refreshed.txt"]
    [note] = _lost_notes(report)
    assert "no answer from the observer within the timeout" in note, note
    assert report.sandbox.looks[0].startswith("observer, then exec (no answer")


def test_a_server_cannot_write_fake_records_into_the_observer(no_leftovers):
    report = scan("zoo-observer-forger")
    record = _refresh(report)
    text = next(p for p in report.probes if p.tool == "refresh_index").preview or ""
    said = ast.literal_eval(text.split("ZOO-ATTEMPTS ", 1)[1])
    assert len(said) == 1, said  # it found the observer
    [attempts] = said.values()
    assert attempts == {"write fd/1": "EACCES", "read fd/0": "EACCES", "read mem": "EACCES", "ptrace": "EPERM"}
    assert record.files.created == ["/workspace/index-refreshed.txt"]  # the true snapshot, not the forged one
    assert not _lost_notes(report) and report.sandbox.looks == ["observer"]


def _findings(report: Report) -> list[tuple[str, str, str]]:
    return sorted((f.rule_id, f.tool or "", f.severity) for f in report.findings if f.rule_id[0] in "BP")


@pytest.mark.parametrize("command", ["zoo-probe-exfil", "zoo-probe-persist", "zoo-probe-egress"])
def test_a_scan_finds_the_same_with_the_observer_as_with_the_exec_path(command, no_leftovers):
    by_observer, by_exec = scan(command), scan(command, observer=False)
    assert by_observer.sandbox.looks == ["observer"]
    assert by_exec.sandbox.looks == ["exec (the observer is turned off)"]
    assert _findings(by_observer) == _findings(by_exec) and _findings(by_exec)
    assert [(b.tool, b.files, b.canaries) for b in by_observer.behavior] \
        == [(b.tool, b.files, b.canaries) for b in by_exec.behavior]
