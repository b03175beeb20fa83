"""Signals during a scan: SIGTERM/SIGHUP end the scan like Ctrl-C does (so `finally` tears the sandbox down), a
Ctrl-C that CPython would drop is delivered again, and teardown itself is not interrupted by a second signal."""

from __future__ import annotations

import re
import signal
import sys
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from types import FrameType

_CATCH = (signal.SIGTERM, signal.SIGHUP)
INTERRUPTED_EXIT = 130  # the exit code of a command an interrupt ended


# A stop sent again within this long is the same stop: a SIGKILLed batch's scan gets SIGTERM twice at once (from
# the fork server, and from the kernel as the server dies). Delivered twice, the second SIGINT meets the event
# loop's second-Ctrl-C handler, which raises inside whatever task runs, and asyncio prints that task's traceback.
REPEATED_STOP_SECONDS = 1.0


def _as_sigint() -> Callable[[int, FrameType | None], None]:
    """A handler delivering SIGINT instead: inside the event loop its handler cancels the main task cleanly
    (raising from here could land in the loop's own internals); outside, the default handler raises
    KeyboardInterrupt. A SIGTERM or SIGHUP within REPEATED_STOP_SECONDS of the last one delivered is dropped (the
    scan is ending already); a Ctrl-C pressed twice is not (the loop's second-Ctrl-C handling is the user's)."""
    last: float | None = None

    def handler(_signum: int, _frame: FrameType | None) -> None:
        nonlocal last
        now = time.monotonic()
        if last is not None and now - last < REPEATED_STOP_SECONDS:
            return
        last = now
        signal.raise_signal(signal.SIGINT)

    return handler


class ScanInterrupted(KeyboardInterrupt):
    """A Ctrl-C (or SIGTERM/SIGHUP as one) ended a scan after its sandbox's teardown ran: `left`, what the teardown
    could not remove (empty: nothing), or None when the teardown itself failed."""

    def __init__(self, left: list[str] | None) -> None:
        super().__init__()
        self.left = left


def interrupted_line(left: list[str] | None) -> str:
    """The one line an interrupted scan ends with, true to its teardown (`ScanInterrupted.left`)."""
    if left is None:
        return "interrupted; the sandbox's teardown failed: `mcp-sandbox gc` removes what it left"
    if left:
        return (f"interrupted; the sandbox was not fully torn down: left {', '.join(left)}; `mcp-sandbox gc` removes "
                "what is left")
    return "interrupted; the sandbox was torn down"


def forget_handled_interrupts() -> None:
    """Call once every interrupt has been handled, just before the process exits. CPython 3.11 notes a
    KeyboardInterrupt that leaves code exec'd from a string (dataclasses' and namedtuple's generated methods, made
    while modules import: where a Ctrl-C during the scan path's imports lands) as unhandled, even when the scan
    catches it further up, and a `python -m` run so noted ends with SIGINT at exit: returncode -2, not the 130 it
    chose. Running more string code clears the note (pythonrun.c: run_eval_code_obj resets it first)."""
    exec("pass")  # noqa: S102 - a constant: running it is the point


# How long after a dropped KeyboardInterrupt SIGINT is sent to the main thread again: by then the callback that
# dropped it (and the hook that saw it drop) has returned, so the handler runs in the code around it.
REDELIVER_AFTER_SECONDS = 0.01


@contextmanager
def keep_lost_interrupts() -> Iterator[None]:
    """A KeyboardInterrupt that CPython cannot raise is delivered again instead of dropped. The signal's handler
    raises it wherever the main thread is; when that is a weakref callback or a `__del__`, CPython prints it
    ("Exception ignored in: ...") and goes on. The seen case is the callback that drops an import's module lock:
    about 1 in 100 Ctrl-Cs sent while a scan imports its code, after which the scan ran to its end. Here
    sys.unraisablehook takes such an interrupt and, REDELIVER_AFTER_SECONDS later, SIGINT is sent to the main thread
    once more, to whatever handler it then meets (the default raises KeyboardInterrupt, a running event loop cancels
    its task, `uninterruptible` holds it); nothing is printed. Every other unraisable exception goes to the hook
    that was there before."""
    previous = sys.unraisablehook
    sys.unraisablehook = _redelivering(previous)
    try:
        yield
    finally:
        sys.unraisablehook = previous


def _redelivering(previous: Callable[[sys.UnraisableHookArgs], object]) -> Callable[[sys.UnraisableHookArgs], None]:
    def hook(unraisable: sys.UnraisableHookArgs) -> None:
        interrupt = unraisable.exc_type is not None and issubclass(unraisable.exc_type, KeyboardInterrupt)
        if not interrupt or threading.current_thread() is not threading.main_thread():
            previous(unraisable)
            return
        # Not sent from here: the handler would run in this hook, whose own exceptions CPython drops as well.
        timer = threading.Timer(REDELIVER_AFTER_SECONDS, _interrupt_main, args=(threading.main_thread().ident,))
        timer.daemon = True
        try:
            timer.start()
        except KeyboardInterrupt:  # another Ctrl-C while the timer starts: the timer sends one all the same
            pass
    return hook


def caused_by_interrupt(exc: BaseException) -> bool:
    """Whether `exc` came of a Ctrl-C: a KeyboardInterrupt in its chain of causes. CPython 3.11 turns a
    KeyboardInterrupt raised in a `__set_name__` (a dataclass field's, while a module imports) into a RuntimeError
    caused by it; pydantic-core, one raised while it builds a validator, into a SchemaError that names it only in
    its text. The interrupt is still what ended the work."""
    seen: set[int] = set()
    current: BaseException | None = exc
    while current is not None and id(current) not in seen:
        if isinstance(current, KeyboardInterrupt) or _schema_error_of_interrupt(current):
            return True
        seen.add(id(current))
        current = current.__cause__ or current.__context__
    return False


# pydantic-core's SchemaError text for an exception raised while a validator is built: one line per cause, indented,
# `  KeyboardInterrupt: ` for an interrupt (the schema is the scanner's own, never a server's, so the text is ours).
_INTERRUPT_IN_SCHEMA_ERROR = re.compile(r"^\s+KeyboardInterrupt:", re.MULTILINE)


def _schema_error_of_interrupt(exc: BaseException) -> bool:
    """A pydantic-core SchemaError made of a Ctrl-C. pydantic-core is not imported for this: when it is not loaded,
    nothing raised one."""
    schema_error = getattr(sys.modules.get("pydantic_core"), "SchemaError", None)
    return (schema_error is not None and isinstance(exc, schema_error)
            and _INTERRUPT_IN_SCHEMA_ERROR.search(str(exc)) is not None)


def _interrupt_main(ident: int | None) -> None:
    """SIGINT to the main thread (a real signal: it also ends a wait the main thread is blocked in)."""
    if ident is None:
        return
    try:
        signal.pthread_kill(ident, signal.SIGINT)
    except ProcessLookupError:  # the main thread has ended: so has the command
        pass


@contextmanager
def terminate_as_interrupt() -> Iterator[None]:
    """SIGTERM (and SIGHUP, unless the process was started with it ignored, as `nohup` does) ends the scan as Ctrl-C
    would. A process started with SIGINT ignored (`cmd &` from a script) gets SIGINT's default handler back for the
    scan, or the SIGTERM it turns into SIGINT would be dropped and the scan could not be stopped."""
    previous: dict[int, object] = {}
    if signal.getsignal(signal.SIGINT) == signal.SIG_IGN:
        previous[signal.SIGINT] = signal.signal(signal.SIGINT, signal.default_int_handler)
    as_sigint = _as_sigint()
    for sig in _CATCH:
        if sig == signal.SIGHUP and signal.getsignal(sig) == signal.SIG_IGN:
            continue  # started under nohup: a hangup is meant to pass unnoticed
        previous[sig] = signal.signal(sig, as_sigint)
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
