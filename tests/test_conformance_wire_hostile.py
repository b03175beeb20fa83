"""The conformance probe's raw wire (scanner/conformance/wire.py) against hostile scripted servers over a real attach
stream (a socketpair carrying Docker's multiplexed frames, read by the real AttachedStdio): a server that floods the
probe with requests, or stops reading its stdin, can neither crash the probe nor hold it past its timeouts. No
Docker."""

from __future__ import annotations

import json
import socket
import time
from collections.abc import Callable
from typing import Any, BinaryIO

import anyio

from sandbox.run.attach import AttachedStdio
from scanner.conformance.model import Observed
from scanner.conformance.probe import ProbePlan, observe
from tests.attached_pair import serve_in_thread, timed_run

PLAN = ProbePlan(full=True, client_info={"name": "c", "version": "1"}, capabilities={}, first_timeout=1, timeout=1,
                 quiet_seconds=0.2)
Script = Callable[[BinaryIO, Callable[[bytes], None]], None]


def _observed(script: Script) -> tuple[Observed | None, float]:
    """observe() against `script` (reading the probe's lines, writing lines with `out`); what it saw, or None when it
    was still running 20 s later, and the seconds it took."""
    ours, theirs = socket.socketpair()
    serve_in_thread(theirs, script)

    async def run() -> Observed | None:
        with anyio.move_on_after(20):
            return (await observe(AttachedStdio(ours), PLAN))[0]
        return None

    try:
        return timed_run(lambda: anyio.run(run))
    finally:
        theirs.close()


def _request(request_id: Any, method: str = "roots/list") -> bytes:
    return json.dumps({"jsonrpc": "2.0", "id": request_id, "method": method}).encode() + b"\n"


def test_a_flood_of_server_requests_around_each_answer_neither_crashes_the_probe_nor_loses_the_answers() -> None:
    # Before: the reader wrote each -32601 reply itself while a request was being written, and the attach stream
    # refused the second writer (anyio.BusyResourceError): an internal error of the scan.
    def script(stdin: BinaryIO, out: Callable[[bytes], None]) -> None:
        for line in stdin:
            message = json.loads(line)
            if "id" in message and "method" in message:  # a request of the probe's
                flood = b"".join(_request(f"s-{number}") for number in range(300))
                out(flood)  # before the answer, and after it, while the probe writes its next request
                out(json.dumps({"jsonrpc": "2.0", "id": message["id"], "result": {"tools": []}}).encode() + b"\n")
                out(flood)

    observed, _ = _observed(script)
    assert observed is not None
    assert observed.first is not None and observed.first.result == {"tools": []}
    assert observed.ping is not None and observed.ping.answered
    assert "roots/list" in observed.unasked


def test_a_server_that_never_reads_its_stdin_and_floods_huge_requests_cannot_hold_the_probe() -> None:
    big = "x" * (2 * 1024 * 1024)

    def script(stdin: BinaryIO, out: Callable[[bytes], None]) -> None:
        for number in range(12):  # each reply echoes the 2 MiB id: far more than the socket buffers hold
            out(_request(f"{big}{number}"))
        time.sleep(30)

    observed, seconds = _observed(script)
    assert observed is not None, "the probe was still writing 20 s later"
    assert observed.first is not None and observed.first.timed_out
    assert seconds < 15
