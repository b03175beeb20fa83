"""SIGTERM ends a scan like Ctrl-C even when the process was started with SIGINT ignored (`cmd &` from a script),
and a process started under `nohup` keeps ignoring SIGHUP. Real processes and real signals."""

from __future__ import annotations

import signal
import subprocess
import sys
import time

_CHILD = """
import signal, sys, time
from scanner.pipeline.interrupts import terminate_as_interrupt
try:
    with terminate_as_interrupt():
        print("ready", flush=True)
        time.sleep(30)
    print("slept through", flush=True)
except KeyboardInterrupt:
    print("interrupted", flush=True)
    sys.exit(130)
"""


def _run(send: signal.Signals, *, ignore: tuple[signal.Signals, ...]) -> tuple[int, str]:
    def ignoring() -> None:
        for sig in ignore:
            signal.signal(sig, signal.SIG_IGN)

    child = subprocess.Popen([sys.executable, "-c", _CHILD], stdout=subprocess.PIPE, text=True, preexec_fn=ignoring)
    assert child.stdout is not None
    assert child.stdout.readline().strip() == "ready"
    child.send_signal(send)
    time.sleep(0.5)
    if child.poll() is None:  # still sleeping: the signal was dropped
        child.kill()
        return child.wait(), "still running"
    return child.returncode, child.stdout.read().strip()


def test_sigterm_interrupts_a_process_started_with_sigint_ignored() -> None:
    assert _run(signal.SIGTERM, ignore=(signal.SIGINT,)) == (130, "interrupted")


def test_sigterm_interrupts_a_process_started_normally() -> None:
    assert _run(signal.SIGTERM, ignore=()) == (130, "interrupted")


def test_sighup_is_still_ignored_under_nohup() -> None:
    code, said = _run(signal.SIGHUP, ignore=(signal.SIGHUP,))
    assert said == "still running", said


def test_sighup_interrupts_without_nohup() -> None:
    assert _run(signal.SIGHUP, ignore=()) == (130, "interrupted")
