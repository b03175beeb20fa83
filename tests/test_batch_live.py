"""A real batch of three zoo servers, two at once, SIGKILLed mid-run and rerun: the rerun scans only what was not
done, every report is filed, and no sandbox container is left behind."""

from __future__ import annotations

import json
import os
import signal
import sqlite3
import subprocess
import sys
import time
from pathlib import Path

import pytest

from sandbox.core import labels
from tests.sandbox_helpers import CLI, REPO, ZOO, labelled_containers

pytestmark = pytest.mark.docker

COMMANDS = ("zoo-plain", "zoo-probe-good", "zoo-probe-egress")


def _states(db: Path) -> dict[str, tuple[str, int]]:
    connection = sqlite3.connect(f"file:{db}?mode=ro", uri=True, timeout=30)
    try:
        return {json.loads(key)[1]: (state, attempts)
                for key, state, attempts in connection.execute("SELECT key, state, attempts FROM targets")}
    finally:
        connection.close()


def _wait_for_first_done(process: subprocess.Popen[bytes], db: Path, timeout: float) -> dict[str, tuple[str, int]]:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        assert process.poll() is None, "the batch ended before it could be killed"
        if db.is_file():
            states = _states(db)
            if any(state == "done" for state, _ in states.values()) and \
                    any(state == "running" for state, _ in states.values()):
                return states
        time.sleep(0.2)
    raise AssertionError("no target finished in time")


def _batch(targets: Path, out: Path, stderr: Path) -> subprocess.Popen[bytes]:
    with stderr.open("wb") as handle:
        return subprocess.Popen([*CLI, "batch", str(targets), "--out", str(out), "--jobs", "2", "--retries", "0"],
                                cwd=REPO, stdout=subprocess.DEVNULL, stderr=handle)


def test_a_sigkilled_batch_resumes_with_only_the_unfinished_targets(tmp_path: Path, docker_client, no_leftovers) -> None:
    targets = tmp_path / "targets.txt"
    targets.write_text("# three zoo servers\n" + "".join(f"{ZOO} --command {c}\n" for c in COMMANDS))
    out, db = tmp_path / "out", tmp_path / "out" / "batch.sqlite"
    first = _batch(targets, out, tmp_path / "first.err")
    at_kill = _wait_for_first_done(first, db, timeout=240)
    os.kill(first.pid, signal.SIGKILL)
    first.wait()
    done_first = {c for c, (state, _) in at_kill.items() if state == "done"}
    reports_first = {p: p.stat().st_mtime_ns for p in (out / "reports").rglob("*.json")}
    assert len(reports_first) == len(done_first) >= 1

    second = subprocess.run([*CLI, "batch", str(targets), "--out", str(out), "--jobs", "2", "--retries", "0"],
                            cwd=REPO, capture_output=True, text=True, timeout=300)
    assert second.returncode == 1, second.stderr  # zoo-probe-egress calls out: B2 errors block it
    running_at_kill = sum(1 for state, _ in at_kill.values() if state == "running")
    assert f"{running_at_kill} left running by a dead run requeued" in second.stderr
    rescanned = [c for line in second.stderr.splitlines() if line.startswith("done    ")
                 for c in COMMANDS if f"--command {c}:" in line]
    assert sorted(rescanned) == sorted(set(COMMANDS) - done_first)  # only what the killed run had not finished
    assert all(p.stat().st_mtime_ns == mtime for p, mtime in reports_first.items())  # done reports untouched
    assert {c: state for c, (state, _) in _states(db).items()} == {c: "done" for c in COMMANDS}

    summary = json.loads((out / "summary.json").read_text())
    assert len(summary["targets"]) == 3 and all((out / t["report"]).is_file() for t in summary["targets"])
    assert {t["verdict"] for t in summary["targets"] if "zoo-probe-egress" in t["target"]} == {"block"}
    # The killed run's scans got SIGTERM from the kernel when it died and tore their sandboxes down; whatever a dead
    # owner might have left, the rerun's sweep removed.
    dead = [c["Id"][:12] for c in labelled_containers(docker_client) if not labels.owner_alive(c["Labels"])]
    assert dead == []



_OWNER = """
import sys
from sandbox.core import engine, images
from sandbox.core.session import SandboxSession
client = engine.connect()
session = SandboxSession(client)
container = session.create_container("run", image=images.ensure_runtime_image(client, "python").tag,
                                     command=["sleep", "300"])
print(container, flush=True)
sys.stdin.read()  # until the test kills this process: a scan that dies without its teardown
"""


def _owner_of_a_container() -> tuple[subprocess.Popen[str], str]:
    """A process that made a labelled container and holds it, alive, until it is killed."""
    owner = subprocess.Popen([sys.executable, "-c", _OWNER], cwd=REPO, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                             text=True)
    assert owner.stdout is not None
    return owner, owner.stdout.readline().strip()


def test_what_a_scan_dying_during_the_run_left_is_gone_when_the_run_ends(tmp_path: Path, docker_client, monkeypatch,
                                                                       capsys, no_leftovers) -> None:
    # A killed batch's scan can still be tearing down when the rerun's sweeps run (its owner alive: kept), and its
    # teardown can fail; the rerun's last sweep, once its scans are done, removes what such a scan left.
    from scanner.batch import runner
    from scanner.batch.progress import Progress
    from scanner.batch.runner import BatchOptions
    from scanner.batch.store import Store
    from scanner.cli import batch

    dying, dying_container = _owner_of_a_container()
    living, living_container = _owner_of_a_container()

    def the_run(*_args: object, **_kwargs: object) -> None:  # the scans' own sweeps are over: the owner dies now
        assert {dying_container, living_container} <= {c["Id"] for c in labelled_containers(docker_client)}
        dying.kill()
        dying.wait()

    monkeypatch.setattr(runner, "run_batch", the_run)
    try:
        with Store.open(tmp_path / "batch.sqlite") as store:
            interrupted = batch._scan_queued(store, BatchOptions(out=tmp_path), batch._Place(jobs=1), Progress())
        assert not interrupted
        left = {c["Id"] for c in labelled_containers(docker_client)}
        assert dying_container not in left and living_container in left  # the living owner's is kept
        assert "removed what dead scans left: 1 container\n" in capsys.readouterr().err
    finally:
        living.kill()
        living.wait()
        docker_client.api.remove_container(living_container, force=True)
