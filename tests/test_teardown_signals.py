"""A second signal while a scan ends (a batch's fork server dying sends its scans SIGTERM twice) does not cut the
wait for the scan's threads or its teardown short: nothing of the session is left. Real engine, real signals, in
this process's main thread (signals reach only it)."""

from __future__ import annotations

import os
import signal
import time
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from typing import Any

import pytest

from sandbox.core import images, labels
from sandbox.core.session import SandboxSession
from scanner.pipeline.assemble import ScanParts
from scanner.pipeline.head_start import HeadStart
from scanner.pipeline.interrupts import ScanInterrupted, terminate_as_interrupt
from scanner.pipeline.phase_clock import PhaseClock
from scanner.pipeline.scan import Concurrent, in_session
from scanner.pipeline.targets import parse_target
from tests.sandbox_helpers import ZOO, labelled_containers

pytestmark = pytest.mark.docker


def _signal_first(wait: Callable[..., Any]) -> Callable[..., Any]:
    """`wait`, receiving SIGTERM just as it begins (the scan's second signal, while it waits for its threads)."""
    def signalled(*args: Any, **kwargs: Any) -> Any:
        os.kill(os.getpid(), signal.SIGTERM)
        time.sleep(0.05)  # the handler runs here, between this thread's bytecodes
        return wait(*args, **kwargs)
    return signalled


def _sessions_of_this_process(docker_client) -> set[str]:
    return {c["Labels"][labels.SESSION] for c in labelled_containers(docker_client)
            if c["Labels"].get(labels.OWNER_PID) == str(os.getpid())}


@pytest.mark.parametrize("ending", [False, True])
def test_a_signal_while_the_head_start_waits_for_its_threads_leaves_nothing(docker_client, ending: bool) -> None:
    """Before, the KeyboardInterrupt left close() from the wait: the sink a thread was still creating and starting
    stayed behind (found in a batch SIGKILLed under load)."""
    before = _sessions_of_this_process(docker_client)
    interrupted = False
    with terminate_as_interrupt():
        early = HeadStart(observe=True, hostname="quiet-host")
        threads_ended = early._pool.shutdown
        early._pool.shutdown = _signal_first(threads_ended)  # type: ignore[method-assign]
        try:
            early.close(ending=True) if ending else early.close()
        except KeyboardInterrupt:
            interrupted = True
    threads_ended(wait=True)  # a thread close() did not wait for would create its container only now
    assert interrupted is not ending  # held, then delivered once the teardown was done (unless ending already)
    assert _sessions_of_this_process(docker_client) - before == set()


def test_a_signal_while_an_interrupted_scan_waits_for_its_threads_leaves_nothing(docker_client) -> None:
    image = images.ensure_runtime_image(docker_client, "python").tag
    parts = ScanParts(target=parse_target(str(ZOO)), probes_enabled=False, clock=PhaseClock())

    def stages(session: SandboxSession, running: Concurrent) -> None:
        container = session.create_container("run", image=image, command=["sleep", "60"], entrypoint=[])
        docker_client.api.start(container)
        running.source = running.pool.submit(time.sleep, 0.3)  # a thread of the scan, still running at the interrupt
        running.settle = _signal_first(running.settle)  # type: ignore[method-assign]
        raise KeyboardInterrupt  # the first signal

    with ThreadPoolExecutor(max_workers=4) as pool, terminate_as_interrupt(), pytest.raises(KeyboardInterrupt):
        in_session(parts, docker_client, pool, time.monotonic(), stages, head_start=None)
    assert parts.teardown is not None and parts.teardown.complete, parts.teardown
    assert parts.session is not None and labelled_containers(docker_client, parts.session) == []


@pytest.mark.parametrize("second", [signal.SIGINT, signal.SIGTERM])
def test_a_second_signal_while_an_interrupted_scan_halts_its_session_leaves_nothing(
        docker_client, second: signal.Signals) -> None:
    """Ctrl-C twice (or a SIGTERM sent again a second later): the second one while the scan halts its session (one
    engine call a container, to kill it). Before the fix the halt ran before the signals were held: the interrupt
    left the `finally` from the halt, the teardown never ran, the scan's containers stayed and the CLI's last line
    said the sandbox was torn down."""
    image = images.ensure_runtime_image(docker_client, "python").tag
    parts = ScanParts(target=parse_target(str(ZOO)), probes_enabled=False, clock=PhaseClock())

    def stages(session: SandboxSession, running: Concurrent) -> None:
        container = session.create_container("run", image=image, command=["sleep", "60"], entrypoint=[])
        docker_client.api.start(container)
        halt = session.halt

        def signalled_halt() -> None:
            time.sleep(1.1)  # a SIGTERM sent again after REPEATED_STOP_SECONDS is a new stop, not the same one
            os.kill(os.getpid(), second)
            time.sleep(0.05)  # the handler runs here, between this thread's bytecodes
            halt()

        session.halt = signalled_halt  # type: ignore[method-assign]
        os.kill(os.getpid(), signal.SIGTERM)  # the first signal
        time.sleep(5)

    with ThreadPoolExecutor(max_workers=4) as pool, terminate_as_interrupt(), pytest.raises(ScanInterrupted) as ended:
        in_session(parts, docker_client, pool, time.monotonic(), stages, head_start=None)
    assert ended.value.left == []  # the CLI's last line: torn down, true to the teardown
    assert parts.teardown is not None and parts.teardown.complete, parts.teardown
    assert parts.session is not None and labelled_containers(docker_client, parts.session) == []
