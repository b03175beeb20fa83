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


def forget_handled_interrupts() -> None:
    """Call once every interrupt has been handled, just before the process exits. CPython 3.11 notes a
    KeyboardInterrupt that leaves code exec'd from a string (dataclasses' and namedtuple's generated methods, made
    while modules import: where a Ctrl-C during the scan path's imports lands) as unhandled, even when the scan
    catches it further up, and a `python -m` run so noted ends with SIGINT at exit: returncode -2, not the 130 it
    chose. Running more string code clears the note (pythonrun.c: run_eval_code_obj resets it first)."""
    exec("pass")  # noqa: S102 - a constant: running it is the point


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
def uninterruptible(*, redeliver: bool = True) -> Iterator[None]:
    """Hold SIGINT/SIGTERM/SIGHUP off for a critical section: the wait for a scan's threads and its teardown, which a
    second signal must not cut short (the threads would then create what no teardown removes). A signal held
    meanwhile is delivered, once, to the handler it would have met, after the section ended normally (Ctrl-C during
    a clean teardown still ends the scan); not when the section raised, or with `redeliver` False: the scan is
    ending already. Main thread only, as every signal handler."""
    held: list[int] = []

    def hold(signum: int, _frame: FrameType | None) -> None:
        held.append(signum)

    previous = {sig: signal.signal(sig, hold) for sig in (signal.SIGINT, *_CATCH)}
    try:
        yield
    finally:
        for sig, handler in previous.items():
            signal.signal(sig, handler)  # type: ignore[arg-type]
    for sig in dict.fromkeys(held) if redeliver else ():
        signal.raise_signal(sig)
