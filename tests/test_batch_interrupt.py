"""A second Ctrl-C (or SIGTERM) while the batch stops its scans does not cut the stop short: every scan in flight is
still waited for (each tearing its sandbox down) and its row put back in the queue. Cut short, the rows were left
`running`, the next run counted each as a target the batch had died on, and after three such runs an innocent target
was failed as one that "may take the batch down"."""

from __future__ import annotations

import os
import signal
import sys
import threading
import time
from pathlib import Path

import pytest

from scanner.batch.runner import BatchOptions, run_batch
from scanner.batch.store import Store
from scanner.batch.subprocess_backend import SubprocessBackend
from scanner.batch.targets import BatchTarget
from tests.test_batch_store import _Quiet

# A scan that says it runs, then, on SIGTERM (what the batch's stop sends), takes its time to tear down.
SLOW_TEARDOWN = """
import pathlib, signal, sys, time
def teardown(*_):
    time.sleep(3)
    sys.exit(130)
signal.signal(signal.SIGTERM, teardown)
pathlib.Path(sys.argv[sys.argv.index("--json") + 1] + ".running").touch()
time.sleep(60)
"""


def _interrupt_twice(work: Path, scans: int) -> None:
    """Ctrl-C once every scan runs, and again half a second later, while they tear down."""
    deadline = time.monotonic() + 60
    while len(list(work.glob("*.running"))) < scans and time.monotonic() < deadline:
        time.sleep(0.05)
    os.kill(os.getpid(), signal.SIGINT)
    time.sleep(0.5)
    os.kill(os.getpid(), signal.SIGINT)


def test_a_second_interrupt_while_the_scans_stop_still_requeues_every_row(tmp_path: Path) -> None:
    scan = tmp_path / "slow_teardown.py"
    scan.write_text(SLOW_TEARDOWN)
    targets = [BatchTarget(f"npm:server-{n}@1.0.0") for n in range(3)]
    with Store.open(tmp_path / "batch.sqlite") as store:
        store.add(targets)
        backend = SubprocessBackend(2, tmp_path / "work", command=[sys.executable, str(scan)])
        signals = threading.Thread(target=_interrupt_twice, args=(tmp_path / "work", 2), daemon=True)
        signals.start()
        with pytest.raises(KeyboardInterrupt):
            run_batch(store, backend, BatchOptions(out=tmp_path, stop_grace=30), _Quiet(), sleep=lambda _s: None)
        signals.join(5)
        assert not signals.is_alive()
        assert backend.in_flight() == []
        assert [(row.state, row.attempts) for row in store.rows()] == [("queued", 0)] * 3
        assert store.requeue_abandoned() == 0  # none left for the next run to count against its target
