"""The same stop sent twice at once (a SIGKILLed batch's scan gets SIGTERM from its fork server and from the kernel)
ends the scan once: no second SIGINT reaches the event loop's second-Ctrl-C handler, which would raise inside a task
and have asyncio print that task's traceback. A SIGTERM sent again later still interrupts. Real signals."""

from __future__ import annotations

import signal
import time

import pytest

from scanner.pipeline.interrupts import REPEATED_STOP_SECONDS, terminate_as_interrupt
from tests.sandbox_helpers import run_python

_LOOP_CHILD = """
import signal, sys
import anyio
from scanner.pipeline.interrupts import REPEATED_STOP_SECONDS, terminate_as_interrupt
from tests.sandbox_helpers import run_python

async def main() -> None:
    async def reading() -> None:  # a task of the scan's session, running as the stops arrive
        signal.raise_signal(signal.SIGTERM)
        signal.raise_signal(signal.SIGTERM)
        await anyio.sleep(30)
    async with anyio.create_task_group() as group:
        group.start_soon(reading)

def ending() -> str:
    try:
        with terminate_as_interrupt():
            anyio.run(main)
    except KeyboardInterrupt:
        return "interrupted"
    return "ran on"

said = ending()
print(said, flush=True)
sys.exit(130 if said == "interrupted" else 0)
"""


def test_two_sigterms_at_once_end_the_event_loop_once_and_print_nothing() -> None:
    child = run_python(_LOOP_CHILD)
    assert (child.returncode, child.stdout.strip(), child.stderr) == (130, "interrupted", "")


def test_the_near_miss_both_delivered_the_loop_raises_in_the_task_and_asyncio_prints_it() -> None:
    # Each SIGTERM as SIGINT, as the handler did before: the second meets the loop's second-Ctrl-C handler.
    both = _LOOP_CHILD.replace("        with terminate_as_interrupt():\n",
                               "        signal.signal(signal.SIGTERM, lambda *_: signal.raise_signal(signal.SIGINT))\n"
                               "        if True:\n")
    assert "with terminate_as_interrupt()" not in both
    child = run_python(both)
    assert child.returncode == 130
    assert "unhandled exception during asyncio.run() shutdown" in child.stderr
    assert "KeyboardInterrupt" in child.stderr


def test_a_sigterm_sent_again_later_still_interrupts() -> None:
    with terminate_as_interrupt():
        with pytest.raises(KeyboardInterrupt):
            signal.raise_signal(signal.SIGTERM)
        signal.raise_signal(signal.SIGTERM)  # the same stop: dropped
        signal.raise_signal(signal.SIGHUP)  # a hangup with it: the same stop too
        time.sleep(REPEATED_STOP_SECONDS + 0.05)
        with pytest.raises(KeyboardInterrupt):
            signal.raise_signal(signal.SIGTERM)


def test_ctrl_c_pressed_twice_is_not_coalesced() -> None:
    with terminate_as_interrupt():
        for _ in range(2):
            with pytest.raises(KeyboardInterrupt):
                signal.raise_signal(signal.SIGINT)
