"""A worker killed mid-scan, for real: a redis-server, `batch --broker` over two zoo targets, one worker whose
process group is SIGKILLed (as a host is lost) while its scan's sandbox runs. The scan, told by the kernel that its
parent died, tears its sandbox down; the task, delivered and never acknowledged (acks late), is handed by the broker
to the next worker once the visibility timeout (`worker --visibility-timeout`) has passed, and the batch completes
with each target done once, in one attempt."""

from __future__ import annotations

import os
import re
import signal
import sqlite3
import subprocess
import time
from pathlib import Path

import pytest

from sandbox.core import labels
from scanner.batch.worker import hard_limit
from tests.celery_helpers import _stop, redis_server, start_worker, wait_for_workers
from tests.sandbox_helpers import CLI, REPO, ZOO, labelled_containers

pytestmark = pytest.mark.docker
pytest.importorskip("celery", reason="needs mcp-sandbox[distributed]")

SCAN_TIMEOUT = 60  # the least `worker --scan-timeout` takes
STOP_GRACE = 10  # a zoo scan tears down in a few seconds; the test waits out a visibility timeout just above
# hard_limit(SCAN_TIMEOUT, STOP_GRACE): the same redelivery path as the default 90 s grace, 80 s sooner
LIMIT = hard_limit(SCAN_TIMEOUT, STOP_GRACE)
OPTIONS = ("--scan-timeout", str(SCAN_TIMEOUT), "--stop-grace", str(STOP_GRACE), "--visibility-timeout",
           str(LIMIT + 1))
COMMANDS = ("zoo-plain", "zoo-probe-good")
RECEIVED = r"Task mcp_sandbox\.scan\[([0-9a-f-]+)\] received"
SUCCEEDED = r"Task mcp_sandbox\.scan\[([0-9a-f-]+)\] succeeded"


def _parent(pid: int) -> int | None:
    try:
        return int(Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[1])
    except (OSError, IndexError, ValueError):
        return None


def _descends_from(pid: int, ancestor: int) -> bool:
    for _ in range(8):
        parent = _parent(pid)
        if parent is None or parent <= 1:
            return False
        if parent == ancestor:
            return True
        pid = parent
    return False


def _alive(pid: int) -> bool:
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except (OSError, IndexError):
        return False
    return state != "Z"


def _scan_under(docker_client, worker: int, timeout: float = 300) -> int:  # type: ignore[no-untyped-def]
    """The pid of the scan the worker runs, once that scan has a sandbox container."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        for container in labelled_containers(docker_client):
            owner = int(container["Labels"].get(labels.OWNER_PID) or 0)
            if owner and _descends_from(owner, worker):
                return owner
        time.sleep(0.2)
    raise AssertionError(f"the worker started no sandbox in {timeout} s")


def _rows(store: Path) -> list[tuple[str, int, str]]:
    connection = sqlite3.connect(store)
    try:
        return connection.execute("SELECT state, attempts, status FROM targets ORDER BY position").fetchall()
    finally:
        connection.close()


def test_a_scan_whose_worker_is_killed_is_redelivered_and_done_once(tmp_path: Path, docker_client,
                                                                   no_leftovers) -> None:
    targets, out, logs = tmp_path / "targets.txt", tmp_path / "out", tmp_path / "logs"
    targets.write_text("".join(f"{ZOO} --command {c}\n" for c in COMMANDS))
    logs.mkdir()
    with redis_server(tmp_path / "redis") as url:
        lost = start_worker(url, logs / "killed.log", *OPTIONS)
        wait_for_workers(url, [lost], logs)
        batch = subprocess.Popen([*CLI, "batch", str(targets), "--out", str(out), "--broker", url, "--jobs", "2",
                                  "--retries", "0"], cwd=REPO, stdout=subprocess.DEVNULL,
                                 stderr=(logs / "batch.log").open("wb"))
        try:
            scan = _scan_under(docker_client, lost.pid)
            os.killpg(lost.pid, signal.SIGKILL)  # the worker and its pool process, at once
            lost.wait()
            deadline = time.monotonic() + 120
            while _alive(scan):
                assert time.monotonic() < deadline, "the orphaned scan did not end"
                time.sleep(0.2)
            left = [c["Id"] for c in labelled_containers(docker_client)
                    if c["Labels"].get(labels.OWNER_PID) == str(scan)]
            assert left == [], f"the killed worker's scan left {left}"
            second = start_worker(url, logs / "second.log", *OPTIONS)
            try:
                batch.wait(timeout=LIMIT + 400)
            finally:
                _stop(second, 60)
        finally:
            if batch.poll() is None:
                batch.kill()
                batch.wait()
    killed_log, second_log = ((logs / n).read_text(errors="replace") for n in ("killed.log", "second.log"))
    assert batch.returncode in (0, 1), (logs / "batch.log").read_text()
    assert _rows(out / "batch.sqlite") == [("done", 1, "complete")] * len(COMMANDS)
    interrupted = re.findall(RECEIVED, killed_log)
    assert len(interrupted) == 1 and not re.findall(SUCCEEDED, killed_log)
    assert sorted(re.findall(SUCCEEDED, second_log)) == sorted(re.findall(RECEIVED, second_log))
    assert interrupted[0] in re.findall(SUCCEEDED, second_log)  # redelivered to the second worker, done there
    assert len(re.findall(SUCCEEDED, second_log)) == len(COMMANDS)  # ... and each target scanned to the end once
