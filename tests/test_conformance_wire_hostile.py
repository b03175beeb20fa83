"""The conformance probe's raw wire (scanner/conformance/wire.py) against hostile scripted servers over a real attach
stream (a socketpair carrying Docker's multiplexed frames, read by the real AttachedStdio): a server that floods the
probe with requests, or stops reading its stdin, can neither crash the probe nor hold it past its timeouts. No
Docker."""

from __future__ import annotations

import json
import socket
import threading
import time
from collections.abc import Callable
from typing import Any, BinaryIO

import anyio

from sandbox.run.attach import AttachedStdio
from scanner.conformance.checks import conclude
from scanner.conformance.model import Observed
from scanner.conformance.probe import ProbePlan, observe
from scanner.pipeline.conformance import dead_server
from tests.attached_pair import framed, serve_in_thread, timed_run

PLAN = ProbePlan(full=True, client_info={"name": "c", "version": "1"}, capabilities={}, first_timeout=1, timeout=1,
                 quiet_seconds=0.2)
RESOURCES_PLAN = ProbePlan(full=True, client_info={"name": "c", "version": "1"}, capabilities={"resources": {}},
                           first_timeout=1, timeout=1, quiet_seconds=0.2)
Script = Callable[[BinaryIO, Callable[[bytes], None]], None]


def _observed(script: Script, plan: ProbePlan = PLAN) -> tuple[Observed | None, float]:
    """observe() against `script` (reading the probe's lines, writing lines with `out`); what it saw, or None when it
    was still running 20 s later, and the seconds it took."""
    ours, theirs = socket.socketpair()
    serve_in_thread(theirs, script)

    async def run() -> Observed | None:
        with anyio.move_on_after(20):
            return (await observe(AttachedStdio(ours), plan))[0]
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


def _dual_era_server(first_delay: float) -> Script:
    """A correct dual-era server (2026-07-28 statelessly, 2025-11-25 after an initialize, as the specification lets
    it choose per process) that is slow to answer its first request: still starting, say."""
    def script(stdin: BinaryIO, out: Callable[[bytes], None]) -> None:
        legacy, first = False, True
        for line in stdin:
            message = json.loads(line)
            if "id" not in message:
                continue
            if first:
                time.sleep(first_delay)
                first = False
            method = message["method"]
            legacy = legacy or method == "initialize"
            modern = {} if legacy else {"resultType": "complete", "ttlMs": 0, "cacheScope": "private"}
            answers: dict[str, dict[str, Any]] = {
                "initialize": {"result": {"protocolVersion": "2025-11-25", "capabilities": {"resources": {}},
                                          "serverInfo": {"name": "dual", "version": "1"}}},
                "tools/list": {"result": {"tools": [], **modern}},
                "server/discover": {"result": {"supportedVersions": ["2026-07-28", "2025-11-25"],
                                               "capabilities": {"resources": {}}, **modern}},
                "resources/read": {"error": {"code": -32002 if legacy else -32602, "message": "no such resource"}},
                "resources/list": {"result": {"resources": [], **modern}},
                "resources/templates/list": {"result": {"resourceTemplates": [], **modern}},
                "ping": {"result": {}} if legacy else {"error": {"code": -32601, "message": "Method not found"}},
            }
            answer = answers.get(method, {"error": {"code": -32601, "message": "Method not found"}})
            version = message.get("params", {}).get("_meta", {}).get("io.modelcontextprotocol/protocolVersion")
            if not legacy and version not in (None, "2026-07-28"):
                answer = {"error": {"code": -32022, "message": "Unsupported protocol version"}}
            out(json.dumps({"jsonrpc": "2.0", "id": message["id"], **answer}).encode() + b"\n")
    return script


def test_a_dual_era_server_slow_to_answer_its_first_request_is_not_faulted_for_the_handshake_fallback() -> None:
    # Before: the tools it sent for the first request after the probe's wait were dropped, initialize was taken
    # as proof that it needs the handshake (requires-initialize-handshake, an error), and its 2025-11-25 answers on
    # the connection initialize had switched were judged against 2026-07-28 (-32002, no resultType/ttlMs, ping).
    observed, _ = _observed(_dual_era_server(first_delay=1.4), RESOURCES_PLAN)
    assert observed is not None and observed.first is not None and observed.first.timed_out
    assert observed.late_first is not None and observed.late_first.result == {
        "tools": [], "resultType": "complete", "ttlMs": 0, "cacheScope": "private"}
    findings, records = conclude(observed)
    assert findings == []
    outcomes = {record.rule_id: record.outcome for record in records}
    assert outcomes["W2"] == "inconclusive" and outcomes["W3"] == "passed"
    assert {outcomes[rule] for rule in ("W4", "W7", "W8", "W9", "W10")} == {"not-applicable"}


def test_the_same_server_answering_in_time_is_judged_on_its_2026_answers() -> None:
    observed, _ = _observed(_dual_era_server(first_delay=0), RESOURCES_PLAN)
    assert observed is not None and observed.handshake is None and observed.late_first is None
    findings, records = conclude(observed)
    assert findings == []
    assert {record.outcome for record in records} == {"passed"}


def test_a_server_that_exits_mid_probe_is_not_recorded_as_quiet_for_a_window_it_never_had() -> None:
    # Before: it answered tools/list and server/discover, then exited; the stage was Skipped (incomplete), but the
    # records said deprecated-sampling/-roots/-logging "passed: nothing during the probe and a 3 s quiet window".
    ours, theirs = socket.socketpair()

    def serve() -> None:
        for line in theirs.makefile("rb"):
            message = json.loads(line)
            answer = {"result": {"tools": []}} if message["method"] == "tools/list" else \
                {"result": {"supportedVersions": ["2026-07-28"], "capabilities": {}}}
            theirs.sendall(framed(json.dumps({"jsonrpc": "2.0", "id": message["id"], **answer}).encode() + b"\n"))
            if message["method"] == "server/discover":
                theirs.shutdown(socket.SHUT_RDWR)
                return

    threading.Thread(target=serve, daemon=True).start()
    observed, _ = anyio.run(observe, AttachedStdio(ours), PLAN)
    theirs.close()
    assert observed.cut_short and dead_server(observed, "") is not None
    outcomes = {record.rule_id: (record.outcome, record.detail) for record in conclude(observed)[1]}
    assert outcomes["W2"][0] == outcomes["W3"][0] == "passed"  # what it did answer is still read
    for rule in ("W11", "W12", "W13"):
        assert outcomes[rule][0] == "inconclusive" and "quiet window" in outcomes[rule][1]


def test_noise_and_answers_to_no_request_on_the_fresh_servers_wire_are_said() -> None:
    # Before: the raw wire counted the noise and never said it, and dropped a second answer and one to an id never
    # sent unsaid. The first answer is the one judged, as the scan's client reads it.
    def script(stdin: BinaryIO, out: Callable[[bytes], None]) -> None:
        for line in stdin:
            message = json.loads(line)
            if "id" in message and "method" in message:
                first = {"jsonrpc": "2.0", "id": message["id"], "result": {"tools": []}}
                second = {"jsonrpc": "2.0", "id": message["id"], "result": {"tools": [{"name": "other"}]}}
                out(b"".join(json.dumps(each).encode() + b"\n" for each in (first, second)) + b"starting up\n"
                    + json.dumps({"jsonrpc": "2.0", "id": 4242, "result": {}}).encode() + b"\n")

    observed, _ = _observed(script)
    assert observed is not None and observed.first is not None and observed.first.result == {"tools": []}
    assert len(observed.wire) == 2, observed.wire
    assert observed.wire[0].startswith("the server wrote ") and "(first: starting up" in observed.wire[0]
    assert "(first: id 1, answered again)" in observed.wire[1]
    assert "answers the scan did not read" in observed.wire[1]
