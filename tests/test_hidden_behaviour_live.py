"""Behaviour a server hides from the sandbox's looks, scanned for real (tests/servers/behave-hidden): each tool
claims to be read-only and does one thing the looks used to miss."""

from __future__ import annotations

import os
import subprocess
import sys
from collections.abc import Iterator
from contextlib import contextmanager

import pytest

from scanner.pipeline.inventory import Timeouts
from scanner.pipeline.scan import ScanOptions, run_scan
from scanner.probes.runner import ProbeOptions
from scanner.report.model import Report
from tests.sandbox_helpers import REPO

SERVER = REPO / "tests" / "servers" / "behave-hidden"

pytestmark = pytest.mark.docker


def scan(*tools: str) -> Report:
    report = run_scan(ScanOptions(target=str(SERVER), server_args=[",".join(tools)],
                                  timeouts=Timeouts(startup=20, request=10), probes=ProbeOptions(timeout=5.0)))
    assert report.sandbox.teardown.complete
    return report


def messages(report: Report, rule: str, tool: str) -> list[str]:
    return [f.message for f in report.findings if f.rule_id == rule and f.tool == tool]


@pytest.fixture(scope="module")
def writes_and_leaks() -> Report:
    return scan("write_shm", "write_mqueue", "env_lower", "env_reversed", "env_split", "refuse_long", "refuse_data",
                "long_log", "listed_key")


def test_a_file_written_in_dev_shm_or_dev_mqueue_is_seen(writes_and_leaks):
    """Docker mounts a writable /dev/shm and /dev/mqueue in every container; they were outside the looks."""
    assert writes_and_leaks.status == "complete", writes_and_leaks.errors
    assert any("/dev/shm/.cache-payload" in m for m in messages(writes_and_leaks, "B1", "write_shm"))
    assert any("/dev/mqueue/.q-payload" in m for m in messages(writes_and_leaks, "B1", "write_mqueue"))


@pytest.mark.parametrize(("tool", "encoding"), [("env_lower", "case changed"), ("env_reversed", "reversed"),
                                                ("env_split", "piece")])
def test_an_env_canary_sent_back_altered_is_seen(writes_and_leaks, tool, encoding):
    assert any(f"({encoding})" in m for m in messages(writes_and_leaks, "B3", tool)), tool


def test_a_thread_left_burning_the_cpu_after_its_call_answered_is_b6():
    """A miner in a thread of the server: every call answers at once, no process is left, nothing times out."""
    report = scan("spin_thread")
    found = messages(report, "B6", "spin_thread")
    assert found and "no call running" in found[0], [f.message for f in report.findings]


@pytest.mark.parametrize("tool", ["refuse_long", "refuse_data", "long_log"])
def test_a_secret_in_a_json_rpc_error_or_past_the_kept_answer_is_seen(writes_and_leaks, tool):
    """A refusal's message was searched only as far as the record's 400-character preview, its `data` not at all,
    and an answer only as far as the record keeps it (200,000 characters): a secret past those, or in the data, was
    no B3 (the scan passed)."""
    assert any("in the tool's response" in m for m in messages(writes_and_leaks, "B3", tool)), \
        [f.message for f in writes_and_leaks.findings]


def test_a_secret_answered_just_before_the_server_exits_is_seen():
    """The call is recorded as the crash its look found, and that record kept only the first 200 characters of the
    answer: the secret after them was not searched, and the scan passed (P6 is no security finding)."""
    report = scan("answer_then_exit")
    assert any("in the tool's response" in m for m in messages(report, "B3", "answer_then_exit")), \
        [f.message for f in report.findings]
    assert report.verdict == "block"


def test_a_secret_in_a_tool_definition_is_seen(writes_and_leaks):
    """Only the answers and the egress were searched: a token in a tool's title (or description, or the server's
    instructions) went to the model with every request, and the scan passed."""
    listed = [m for m in messages(writes_and_leaks, "B3", None) if "what the server lists" in m]
    assert listed and "env AWS_ACCESS_KEY_ID" in listed[0], [f.message for f in writes_and_leaks.findings]


def test_a_secret_sent_once_the_scan_is_over_is_seen():
    """A lookup made at the end of input, after the last call's look, was a B2 error outside any call, but the
    secret it carried was not searched for: no B3."""
    report = scan("farewell")
    assert any("outside any probe call" in m for m in messages(report, "B2", None)), report.findings
    assert any("in network traffic after the last call" in m and "env GITHUB_TOKEN (hex)" in m
               for m in messages(report, "B3", None)), [f.message for f in report.findings]


def test_a_packet_that_is_neither_tcp_nor_udp_is_seen():
    """An ICMP echo and a UDP-Lite datagram reach no listener of the sink and were not logged: a server sending to a
    hard-coded address that way had no B2 at all (here only the lookup that named the address was seen)."""
    report = scan("ping_relay")
    other = [m for m in messages(report, "B2", None) if "only counts" in m]
    assert other and "icmp packet to 198.18." in other[0] and "udplite packet" in other[0], \
        [f.message for f in report.findings]
    assert "relay.invalid" in other[0] and report.status == "complete", report.errors


@contextmanager
def machine_busy(spinners: int) -> Iterator[None]:
    """The host's CPUs held by other work, as on a CI runner or a batch worker running scans side by side."""
    load = [subprocess.Popen([sys.executable, "-c", "while True: pass"]) for _ in range(spinners)]
    try:
        yield
    finally:
        for process in load:
            process.kill()
            process.wait()


def test_a_miner_is_b6_on_a_machine_whose_cpus_other_work_holds():
    """Six spinners per core hold the CPUs: the server's spinning thread gets well under half a CPU, so the time
    it used alone passed; the time it waited for a CPU (the kernel's run queue) shows it wanted one throughout."""
    with machine_busy(6 * (os.cpu_count() or 2)):
        report = scan("spin_thread")
    found = messages(report, "B6", "spin_thread")
    assert found and "no call running" in found[0], [f.message for f in report.findings]
