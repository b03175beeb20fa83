"""A head start begun before the flags are read, against an engine that accepts the connection and never answers
(scanner/pipeline/head_start.py `_in_background`, scanner/cli/scan.py): a command the CLI ends without the engine
(a bad flag value) ends as it would have with no head start, and Ctrl-C while the scan waits for that engine ends
the command with one line, instead of waiting out the engine client's 120 s with the signals held. And the reports
a scan writes are whole or absent when an interrupt comes as they are written (scanner/cli/output.py)."""

from __future__ import annotations

import os
import signal
import socket
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from scanner.cli import output
from scanner import atomic_write as atomic
from scanner.pipeline import head_start as head_start_module
from scanner.pipeline.head_start import HeadStart

from tests.silent_listener import never_answering

REPO = Path(__file__).resolve().parent.parent
NO_ANSWER_LIMIT = 60  # seconds: well under the engine client's 120 s timeout, which the bugs waited out


@pytest.fixture
def silent_engine(tmp_path: Path) -> Iterator[str]:
    """DOCKER_HOST of a socket that accepts every connection and never answers."""
    path = tmp_path / "engine.sock"
    server = socket.socket(socket.AF_UNIX)
    server.bind(str(path))
    server.listen(64)
    with never_answering(server):
        yield f"unix://{path}"


def _cli(args: list[str], engine: str, tmp_path: Path) -> subprocess.Popen[str]:
    env = {**os.environ, "DOCKER_HOST": engine, "MCP_SANDBOX_STATE_DIR": str(tmp_path / "state")}
    return subprocess.Popen([sys.executable, "-m", "scanner", *args], cwd=tmp_path, env=env, text=True,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE)


def test_a_bad_flag_value_exits_2_without_waiting_for_an_engine_that_never_answers(silent_engine: str,
                                                                                     tmp_path: Path) -> None:
    """`--memory abc` is a flag scan takes, so the sink's connection was begun before typer read it: the usage
    error no longer waits for the engine's answer (it waited the client's 120 s, every signal held)."""
    cli = _cli(["scan", "pypi:mcp-server-time", "--memory", "abc"], silent_engine, tmp_path)
    _, err = cli.communicate(timeout=NO_ANSWER_LIMIT)
    assert cli.returncode == 2, err
    assert "memory" in err.lower() and "Traceback" not in err


def test_ctrl_c_while_the_scan_waits_for_an_engine_that_never_answers_ends_it_with_one_line(
        silent_engine: str, tmp_path: Path) -> None:
    """The scan waits for the engine (asking whether the sink begun early fits it); Ctrl-C then closes that head
    start at once, and one line says the scan was interrupted (not a failed teardown, then a second line)."""
    cli = _cli(["scan", "pypi:mcp-server-time", "-q"], silent_engine, tmp_path)
    time.sleep(2.5)  # typer has read the flags; the scan waits on the engine
    cli.send_signal(signal.SIGINT)
    _, err = cli.communicate(timeout=NO_ANSWER_LIMIT)
    lines = err.strip().splitlines()
    assert cli.returncode == 130 and lines == ["interrupted"], err


def test_a_head_start_closed_before_the_engine_answered_waits_for_nothing(monkeypatch: pytest.MonkeyPatch) -> None:
    """The near miss of the above in process: closing waits for no connection that has not returned, and a
    connection that returns afterwards is dropped unused (nothing was created, nothing is left)."""
    answer = threading.Event()
    connected: list[object] = []

    def connect(self: HeadStart) -> object:
        answer.wait(30)
        connected.append(self)
        return object()  # never used: the head start gave it up
    monkeypatch.setattr(head_start_module.HeadStart, "_connect", connect)
    early = HeadStart(observe=True, hostname="quiet-host", build_images=False)
    began = time.monotonic()
    early.close()
    assert time.monotonic() - began < 10 and not early.connected and early.left_behind() == []
    assert early.interrupted_line() == "interrupted"
    answer.set()
    deadline = time.monotonic() + 10
    while not connected and time.monotonic() < deadline:
        time.sleep(0.01)
    assert connected and not early.connected  # it answered late, and the session was dropped


def test_a_report_interrupted_as_it_is_written_leaves_the_file_as_it_was(tmp_path: Path,
                                                                       monkeypatch: pytest.MonkeyPatch) -> None:
    """The report is written beside and renamed into place: Ctrl-C during the write leaves the earlier report whole
    and no stray file. The near miss: a write that is not interrupted replaces it."""
    report = tmp_path / "report.json"
    report.write_text('{"old": true}\n')

    def interrupted(_src: str, _dst: object) -> None:
        raise KeyboardInterrupt
    monkeypatch.setattr(atomic.os, "replace", interrupted)
    with pytest.raises(KeyboardInterrupt):
        output.write_text(str(report), '{"new": true}\n', "the JSON report")
    assert report.read_text() == '{"old": true}\n' and [p.name for p in tmp_path.iterdir()] == ["report.json"]
    monkeypatch.undo()
    output.write_text(str(report), '{"new": true}\n', "the JSON report")
    assert report.read_text() == '{"new": true}\n'


def test_a_report_to_a_pipe_or_device_is_written_to_it_not_replaced(tmp_path: Path) -> None:
    fifo = tmp_path / "pipe"
    os.mkfifo(fifo)
    got: list[str] = []
    reader = threading.Thread(target=lambda: got.append(fifo.read_text()))
    reader.start()
    output.write_text(str(fifo), "through the pipe\n", "the JSON report")
    reader.join(10)
    assert got == ["through the pipe\n"] and fifo.is_fifo()
