"""Signals during a scan: SIGTERM/SIGHUP end the scan like Ctrl-C does (so `finally` tears the sandbox down), and
teardown itself is not interrupted by a second signal."""

from __future__ import annotations

import signal
from collections.abc import Iterator
from contextlib import contextmanager
from types import FrameType

_CATCH = (signal.SIGTERM, signal.SIGHUP)


def _as_sigint(_signum: int, _frame: FrameType | None) -> None:
    """Deliver SIGINT instead: inside the event loop its handler cancels the main task cleanly (raising from here
    could land in the loop's own internals); outside, the default handler raises KeyboardInterrupt."""
    signal.raise_signal(signal.SIGINT)


@contextmanager
def terminate_as_interrupt() -> Iterator[None]:
    """SIGTERM (and SIGHUP, unless the process was started with it ignored, as `nohup` does) ends the scan as Ctrl-C
    would. A process started with SIGINT ignored (`cmd &` from a script) gets SIGINT's default handler back for the
    scan, or the SIGTERM it turns into SIGINT would be dropped and the scan could not be stopped."""
    previous: dict[int, object] = {}
    if signal.getsignal(signal.SIGINT) == signal.SIG_IGN:
        previous[signal.SIGINT] = signal.signal(signal.SIGINT, signal.default_int_handler)
    for sig in _CATCH:
        if sig == signal.SIGHUP and signal.getsignal(sig) == signal.SIG_IGN:
            continue  # started under nohup: a hangup is meant to pass unnoticed
        previous[sig] = signal.signal(sig, _as_sigint)
    try:
        yield
    finally:
        for sig, handler in previous.items():
            signal.signal(sig, handler)  # type: ignore[arg-type]


@contextmanager
def uninterruptible() -> Iterator[None]:
    """Hold SIGINT/SIGTERM/SIGHUP off for a short critical section (teardown); they are not lost for the process's
    exit code, since the scan is already ending."""
    sigs = (signal.SIGINT, *_CATCH)
    previous = {sig: signal.signal(sig, signal.SIG_IGN) for sig in sigs}
    try:
        yield
    finally:
        for sig, handler in previous.items():
            signal.signal(sig, handler)
