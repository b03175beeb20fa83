"""Signals during a scan: SIGTERM/SIGHUP end the scan like Ctrl-C does (so `finally` tears the sandbox down), and
teardown itself is not interrupted by a second signal."""

from __future__ import annotations

import os
import signal
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from types import FrameType

_CATCH = (signal.SIGTERM, signal.SIGHUP)
# Code run by exec() or eval() of a string (dataclasses' and namedtuple's generated methods, made while modules
# import) has this file name. CPython 3.11 marks a KeyboardInterrupt that leaves such code as unhandled, even when
# the scan catches it further up, and then ends the process with SIGINT at exit: exit -2 instead of 130 (seen in
# about one SIGTERM in four sent while the scan path imports).
STRING_CODE = "<string>"
REDELIVER_SECONDS = 0.001


def _as_sigint(signum: int, frame: FrameType | None) -> None:
    """Deliver SIGINT instead: inside the event loop its handler cancels the main task cleanly (raising from here
    could land in the loop's own internals); outside, the default handler raises KeyboardInterrupt. Inside code run
    from a string, the signal is sent again REDELIVER_SECONDS later, when that code has returned."""
    if inside_string_code(frame):
        threading.Timer(REDELIVER_SECONDS, os.kill, (os.getpid(), signum)).start()
        return
    signal.raise_signal(signal.SIGINT)


def inside_string_code(frame: FrameType | None) -> bool:
    """Whether `frame` or one of its callers runs code exec'd or eval'd from a string. The outermost frame does not
    count: a program run by `python -c` is such code itself, and an interrupt leaving it is unhandled indeed."""
    while frame is not None and frame.f_back is not None:
        if frame.f_code.co_filename == STRING_CODE:
            return True
        frame = frame.f_back
    return False


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
