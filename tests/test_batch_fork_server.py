"""The embedded batch's fork server (scanner/batch/fork_server.py) for real, no Docker: scans forked from one
pre-imported process run the real `mcp-sandbox scan` (its exit code and `error:` line come back), each in its own
session; stopping the batch, closing the server, or SIGKILLing the coordinator ends the forked scans; a request the
server cannot fork fails alone; a dead server's scans are reported ended once gone; a server too slow to answer is
ended before the job starts afresh (never two scans of one job)."""

from __future__ import annotations

import errno
import hashlib
import json
import os
import signal
import socket
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from scanner.batch import fork_server
from scanner.batch.jobs import Job, JobResult
from scanner.batch.outcome import classify
from scanner.batch.subprocess_backend import SubprocessBackend
from scanner.batch.targets import BatchTarget
from tests.sandbox_helpers import REPO

GONE_SECONDS = 30


def _children(pid: int) -> list[int]:
    found = []
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                stat = (entry / "stat").read_text()
            except OSError:
                continue
            if int(stat[stat.rfind(")") + 2:].split()[1]) == pid:
                found.append(int(entry.name))
    return found


def _alive(pid: int) -> bool:
    try:
        state = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return False
    return state[state.rfind(")") + 2] != "Z"


def _wait_gone(pids: list[int]) -> list[int]:
    deadline = time.monotonic() + GONE_SECONDS
    while time.monotonic() < deadline and any(_alive(p) for p in pids):
        time.sleep(0.1)
    return [p for p in pids if _alive(p)]


def _collect(backend: SubprocessBackend, count: int) -> list[JobResult]:
    results: list[JobResult] = []
    deadline = time.monotonic() + 180
    while len(results) < count and time.monotonic() < deadline:
        results += backend.collect(1.0)
    return results


@pytest.fixture
def silent_server() -> Iterator[str]:
    """An HTTP address that accepts connections and never answers: a scan of it waits (a long-running scan)."""
    with socket.socket() as listener:
        listener.bind(("127.0.0.1", 0))
        listener.listen(8)
        yield f"http://127.0.0.1:{listener.getsockname()[1]}/mcp"


def test_forked_scans_run_the_scan_and_report_its_exit_code_and_reason(tmp_path: Path) -> None:
    empty = tmp_path / "empty"
    empty.mkdir()
    backend = SubprocessBackend(2, tmp_path / "work", fork=True)
    try:
        for key in ("one", "two"):
            backend.submit(Job(key, 1, BatchTarget(str(empty))))
        results = _collect(backend, 2)
        backend.submit(Job("three", 1, BatchTarget(str(empty))))  # the same server forks again
        later = _collect(backend, 1)
    finally:
        backend.close()
    assert (tmp_path / "work" / "fork-server.log").is_file()  # the scans were forked, not started afresh
    assert sorted(r.key for r in results + later) == ["one", "three", "two"]
    for result in results + later:
        assert result.exit_code == 2 and result.report_json is None and not result.stopped
        assert "has no package.json or pyproject.toml" in result.stderr_tail  # the scan's own `error:` line


def _scan_waiting(tmp_path: Path, url: str) -> tuple[SubprocessBackend, int, int]:
    """A backend running one forked scan that waits; (backend, server pid, scan pid)."""
    backend = SubprocessBackend(1, tmp_path / "work", fork=True)
    backend.submit(_url_job(url))
    (server,) = [p for p in _children(os.getpid()) if b"scanner.batch.fork_server" in _cmdline(p)]
    deadline = time.monotonic() + 30
    while not _children(server) and time.monotonic() < deadline:
        time.sleep(0.05)
    (scan,) = _children(server)
    while os.getsid(scan) != scan and time.monotonic() < deadline:  # forked, its own session not yet begun
        time.sleep(0.01)
    return backend, server, scan


def _cmdline(pid: int) -> bytes:
    try:
        return Path(f"/proc/{pid}/cmdline").read_bytes()
    except OSError:
        return b""


def _url_job(url: str) -> Job:
    # `scan --url` of a server that never answers waits for the handshake (no Docker needed); the option stands in
    # the TARGET's place of the job's arguments
    return Job("waits", 1, BatchTarget(f"--url={url}"))


def test_stopping_ends_a_forked_scan_in_its_own_session(tmp_path: Path, silent_server: str) -> None:
    backend, server, scan = _scan_waiting(tmp_path, silent_server)
    try:
        assert os.getsid(scan) == scan != os.getsid(0)  # its own session: a terminal Ctrl-C reaches the batch alone
        assert backend.collect(0.5) == []
        (stopped,) = backend.stop(grace=30)
    finally:
        backend.close()
    assert stopped.stopped and stopped.exit_code != 0
    assert _wait_gone([scan, server]) == []


def test_a_sigkilled_coordinator_takes_the_server_and_its_scans_with_it(tmp_path: Path, silent_server: str) -> None:
    script = ("import sys, time; from pathlib import Path; from scanner.batch.jobs import Job; "
              "from scanner.batch.subprocess_backend import SubprocessBackend; "
              "from scanner.batch.targets import BatchTarget; "
              "b = SubprocessBackend(1, Path(sys.argv[1]), fork=True); b.submit(Job('w', 1, BatchTarget('--url=' + sys.argv[2]))); "
              "print('submitted', flush=True); time.sleep(600)")
    coordinator = subprocess.Popen([sys.executable, "-c", script, str(tmp_path / "work"), silent_server], cwd=REPO,
                                   stdout=subprocess.PIPE, text=True)
    try:
        assert coordinator.stdout is not None and coordinator.stdout.readline().strip() == "submitted"
        (server,) = _children(coordinator.pid)
        deadline = time.monotonic() + 30
        while not _children(server) and time.monotonic() < deadline:
            time.sleep(0.05)
        scans = _children(server)
        assert len(scans) == 1
        os.kill(coordinator.pid, signal.SIGKILL)
        coordinator.wait()
        assert _wait_gone([server, *scans]) == []  # SIGTERM down the chain: each scan tears its sandbox down
    finally:
        if coordinator.poll() is None:
            coordinator.kill()
            coordinator.wait()


STOP_SCRIPT = """
import json, sys, time
from pathlib import Path
from scanner.batch.jobs import Job
from scanner.batch.subprocess_backend import SubprocessBackend
from scanner.batch.targets import BatchTarget
backend = SubprocessBackend(1, Path(sys.argv[1]), fork=True)
backend.submit(Job("zoo", 1, BatchTarget(sys.argv[2], command="zoo-probe-sleeper")))
time.sleep(float(sys.argv[3]))  # into the scan (its tools sleep: the probes take minutes)
(result,) = backend.stop(grace=60)
backend.close()
print(json.dumps({"exit": result.exit_code, "stopped": result.stopped, "seconds": result.seconds, "tail": result.stderr_tail[-300:]}))
"""


@pytest.mark.docker
def test_a_forked_scan_stops_on_sigterm_even_when_the_batch_started_with_sigint_ignored(tmp_path: Path,
                                                                                       no_leftovers) -> None:
    # `nohup mcp-sandbox batch … &` in a script starts it with SIGINT ignored; the scan turns SIGTERM into SIGINT,
    # so without the fork server's reset the stop's SIGTERM was ignored and the scan ran on until SIGKILLed.
    from tests.sandbox_helpers import ZOO

    done = subprocess.run([sys.executable, "-c", STOP_SCRIPT, str(tmp_path / "work"), str(ZOO), "8"], cwd=REPO,
                          capture_output=True, text=True, timeout=300,
                          preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_IGN))
    assert done.returncode == 0, done.stderr
    result = json.loads(done.stdout.strip().splitlines()[-1])
    assert result["stopped"] and result["exit"] == 130, result  # interrupted, not run on or SIGKILLed
    assert "interrupted; the sandbox was torn down" in result["tail"]


def _stem(key: str) -> str:
    return f"{hashlib.sha256(key.encode()).hexdigest()[:16]}-1-{os.getpid()}"


def _running_job(work: Path, key: str) -> list[int]:
    """The live processes whose stderr is one of the job's files (a forked scan's, a fresh one's)."""
    found = []
    for entry in Path("/proc").iterdir():
        try:
            stderr = os.readlink(entry / "fd" / "2") if entry.name.isdigit() else ""
        except OSError:
            continue
        if stderr.startswith(f"{work}/{_stem(key)}") and _alive(int(entry.name)):
            found.append(int(entry.name))
    return found


def test_a_request_the_server_cannot_fork_fails_alone(tmp_path: Path, silent_server: str) -> None:
    """An OSError starting one scan (its stderr file cannot be opened here; EAGAIN, ENOMEM, EMFILE from fork the
    same way) fails that job; the server, and the scan it runs, go on."""
    backend, server, scan = _scan_waiting(tmp_path, silent_server)
    work = tmp_path / "work"
    for name in (f"{_stem('second')}-forked.stderr", f"{_stem('second')}.stderr"):
        (work / name).mkdir()  # where the second job's stderr would go
    try:
        with pytest.raises(OSError) as raised:
            backend.submit(Job("second", 1, BatchTarget(f"--url={silent_server}")))
        assert raised.value.errno == errno.EISDIR and "could not start the scan" in str(raised.value)
        assert backend.collect(1.0) == [] and _alive(server) and _alive(scan)  # the scan in flight goes on
        assert backend.in_flight() == ["waits"]
        backend.submit(Job("third", 1, BatchTarget(f"--url={silent_server}")))  # and the server forks again
        assert sorted(backend.in_flight()) == ["third", "waits"] and len(_children(server)) == 2
        stopped = backend.stop(grace=30)
    finally:
        backend.close()
    assert sorted(r.key for r in stopped) == ["third", "waits"] and all(r.stopped for r in stopped)


def _stopped(pid: int, timeout: float = 30.0) -> bool:
    """Whether the process is stopped (`T` in /proc) within `timeout` seconds: a SIGSTOP takes effect when the
    process is next scheduled, not when kill() returns."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        state = Path(f"/proc/{pid}/stat").read_text()
        if state[state.rfind(")") + 2] == "T":
            return True
        time.sleep(0.01)
    return False


def test_a_dead_server_s_scan_is_reported_ended_once_it_is_gone(tmp_path: Path, silent_server: str) -> None:
    backend, server, scan = _scan_waiting(tmp_path, silent_server)
    try:
        os.kill(scan, signal.SIGSTOP)  # the scan cannot act on the SIGTERM the server's death sends it: still there
        # stopped before the server dies: still running, the waiting scan (which does not catch SIGTERM) was ended by
        # that SIGTERM at once, and rightly reported gone, and the test failed about half the time on a loaded host
        assert _stopped(scan)
        os.kill(server, signal.SIGKILL)
        assert backend.collect(2.0) == [] and _alive(scan)  # not reported ended while its process is still there
        os.kill(scan, signal.SIGCONT)
        (result,) = _collect(backend, 1)
        assert not _alive(scan)
    finally:
        backend.close()
    assert result.exit_code == -signal.SIGTERM and not result.stopped
    outcome = classify(result)
    assert outcome.kind == "retry" and outcome.error == ("the fork server ended (exit -9) and this scan, its child, "
                                                         "was ended with it (SIGTERM)")


def test_a_server_that_does_not_answer_in_time_is_ended_before_the_scan_starts_afresh(
        tmp_path: Path, silent_server: str, monkeypatch: pytest.MonkeyPatch) -> None:
    """The server stopped (a loaded, swapping host) past the answer timeout, then resumed: it must not fork the
    request the backend has meanwhile started as a fresh process, so one job never runs twice."""
    monkeypatch.setattr(fork_server, "ANSWER_TIMEOUT_SECONDS", 2.0)
    backend, server, scan = _scan_waiting(tmp_path, silent_server)
    work = tmp_path / "work"
    os.kill(server, signal.SIGSTOP)
    resume = threading.Timer(3.0, lambda: _signal_if_there(server, signal.SIGCONT))
    resume.start()
    try:
        backend.submit(Job("second", 1, BatchTarget(f"--url={silent_server}")))  # times out: started afresh
        resume.join()
        time.sleep(3.0)  # a server still there would have forked the request by now
        assert len(_running_job(work, "second")) == 1
        assert _wait_gone([server, scan]) == []  # the server was ended, its scan with it
        (lost,) = _collect(backend, 1)
        assert lost.key == "waits" and "the fork server ended" in classify(lost).error  # type: ignore[operator]
        stopped = backend.stop(grace=30)
    finally:
        resume.cancel()
        backend.close()
    assert [r.key for r in stopped] == ["second"]
    assert _running_job(work, "second") == []


def _signal_if_there(pid: int, signum: int) -> None:
    try:
        os.kill(pid, signum)
    except ProcessLookupError:
        pass
