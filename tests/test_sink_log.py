"""The sink's log read a piece at a time (sandbox/run/sink_log.py): each read asks the engine `since` the newest
stamp it saw less the overlap, keeps every line once, and asks no `inspect`; following, a read between settled ones
takes what the follow stream brought and asks the engine nothing. The engine is a stand-in that keeps a stamped log
and answers `since` as the engine does (whole seconds, inclusive), and whose follow stream the test feeds; the live
read (following) is tests/test_egress_sink.py's."""

from __future__ import annotations

import json
import queue
import time
from collections.abc import Iterator
from dataclasses import dataclass, field
from datetime import datetime, timezone
from typing import Any

import pytest
from docker.errors import APIError

from sandbox.run.exec_stream import FRAME
from sandbox.run.sink_log import OVERLAP_SECONDS, SinkLog


@dataclass
class _Response:
    content: bytes
    status: int = 200

    def raise_for_status(self) -> None:
        if self.status != 200:
            from requests import HTTPError, Response
            response = Response()
            response.status_code, response._content = self.status, b'{"message": "no such container"}'
            raise HTTPError("404", response=response)


@dataclass
class _Engine:
    log: list[tuple[float, bytes]] = field(default_factory=list)  # (the engine's stamp, the line)
    asked: list[dict[str, Any]] = field(default_factory=list)
    base_url: str = "http+docker://localhost"
    api_version: str = "1.47"
    timeout: int = 60
    status: int = 200

    def get(self, url: str, params: dict[str, Any], timeout: int) -> _Response:
        assert url.endswith("/containers/sink/logs") and params["timestamps"] == 1 and params["stderr"] == 0
        self.asked.append(dict(params))
        since = params.get("since", 0)
        out = b""
        for stamp, line in self.log:
            if stamp >= since:
                payload = _stamped(stamp, line)
                out += FRAME.pack(1, len(payload)) + payload
        return _Response(out, self.status)

    def inspect_container(self, _container: str) -> dict[str, Any]:
        raise AssertionError("the read asks no inspect")

    def logs(self, container: str, **params: Any) -> _Stream:
        assert container == "sink" and params["follow"] and params["timestamps"] and not params["stderr"]
        self.asked.append({"follow": True, "since": params.get("since")})
        self.stream = _Stream()
        return self.stream


_END = b""


@dataclass
class _Stream:
    """A follow stream the test feeds (`send`), ending when it sends _END or the log closes it."""

    fed: queue.Queue[bytes] = field(default_factory=queue.Queue)
    closed: bool = False

    def __iter__(self) -> Iterator[bytes]:
        while (chunk := self.fed.get()) != _END:
            yield chunk

    def send(self, stamp: float, line: bytes) -> None:
        self.fed.put(_stamped(stamp, line))

    def close(self) -> None:
        self.closed = True
        self.fed.put(_END)


def _stamped(stamp: float, line: bytes) -> bytes:
    text = datetime.fromtimestamp(stamp, timezone.utc).strftime("%Y-%m-%dT%H:%M:%S.%f000Z").encode()
    return text + b" " + line + b"\n"


@dataclass
class _Client:
    api: _Engine


def _line(n: int) -> bytes:
    return json.dumps({"ts": 1000.0 + n, "kind": "dns", "query": f"q{n}.invalid"}).encode()


def test_each_read_asks_for_the_new_lines_and_keeps_every_line_once():
    engine = _Engine([(1_700_000_000.25, b'{"kind": "ready"}'), (1_700_000_000.5, _line(1))])
    log = SinkLog(_Client(engine), "sink", follow=False)  # type: ignore[arg-type]
    assert [line["kind"] for line in log.read()] == ["ready", "dns"]
    engine.log += [(1_700_000_001.75, _line(2)), (1_700_000_001.75, b"not json"), (1_700_000_009.0, _line(3))]
    assert [line.get("query") for line in log.read()] == [None, "q1.invalid", "q2.invalid", "q3.invalid"]
    assert engine.asked[0].get("since") is None and engine.asked[1]["since"] == 1_700_000_000 - OVERLAP_SECONDS
    engine.log.append((1_700_000_009.5, _line(4)))
    assert [line.get("query") for line in log.read()][-2:] == ["q3.invalid", "q4.invalid"]
    assert engine.asked[2]["since"] == 1_700_000_009 - OVERLAP_SECONDS


def test_a_line_that_holds_no_json_object_is_counted_not_skipped_unseen():
    """The engine's json-file log splits a message past 16 KiB and stamps each piece: neither piece is JSON."""
    whole = json.dumps({"ts": 1000.0, "kind": "tcp", "host": "x" * 20_000}).encode()
    engine = _Engine([(1_700_000_000.25, b'{"kind": "ready"}'), (1_700_000_000.5, whole[:16_384]),
                      (1_700_000_000.5, whole[16_384:]), (1_700_000_000.75, _line(1))])
    log = SinkLog(_Client(engine), "sink", follow=False)  # type: ignore[arg-type]
    assert [line["kind"] for line in log.read()] == ["ready", "dns"]
    assert log.unreadable == 2
    log.read()  # the overlap read again: each piece is counted once
    assert log.unreadable == 2


def test_a_line_stamped_just_before_the_newest_but_written_after_it_is_not_missed():
    engine = _Engine([(1_700_000_005.9, _line(1))])
    log = SinkLog(_Client(engine), "sink", follow=False)  # type: ignore[arg-type]
    log.read()
    engine.log.insert(0, (1_700_000_005.1, _line(0)))  # the engine wrote it late, within the overlap
    assert sorted(line["query"] for line in log.read()) == ["q0.invalid", "q1.invalid"]


def test_the_engine_refusing_is_an_api_error():
    log = SinkLog(_Client(_Engine(status=404)), "sink", follow=False)  # type: ignore[arg-type]
    with pytest.raises(APIError):
        log.read()


def _queries(lines: list[dict[str, Any]]) -> list[str | None]:
    return [line.get("query") for line in lines]


def _read_until(log: SinkLog, count: int) -> list[dict[str, Any]]:
    """Reads (not settled) until `count` lines are held: the stream's thread hands them over as they come."""
    deadline = time.monotonic() + 10
    while len(lines := log.read()) < count and time.monotonic() < deadline:
        time.sleep(0.005)
    return lines


def test_following_a_read_takes_what_the_stream_brought_and_asks_the_engine_nothing():
    engine = _Engine([(1_700_000_000.25, b'{"kind": "ready"}'), (1_700_000_003.5, _line(1))])
    log = SinkLog(_Client(engine), "sink")  # type: ignore[arg-type]
    assert _queries(log.read()) == [None, "q1.invalid"]  # the first read asks the engine, then opens the stream
    assert engine.asked[1] == {"follow": True, "since": 1_700_000_003 - OVERLAP_SECONDS}
    engine.stream.send(1_700_000_003.5, _line(1))  # the overlap, sent again by the stream: kept once
    engine.stream.send(1_700_000_004.0, _line(2))
    engine.stream.fed.put(_stamped(1_700_000_004.5, _line(3))[:20])  # a line split across two chunks
    engine.stream.fed.put(_stamped(1_700_000_004.5, _line(3))[20:])
    assert _queries(_read_until(log, 4)) == [None, "q1.invalid", "q2.invalid", "q3.invalid"]
    assert len(engine.asked) == 2  # no fetch since the first
    log.close()


def test_a_settled_read_asks_the_engine_too_and_keeps_each_line_once():
    engine = _Engine([(1_700_000_000.25, _line(1))])
    log = SinkLog(_Client(engine), "sink")  # type: ignore[arg-type]
    log.read()
    engine.log.append((1_700_000_001.0, _line(2)))  # logged, not yet brought by the stream
    assert _queries(log.read()) == ["q1.invalid"]
    assert _queries(log.read(settled=True)) == ["q1.invalid", "q2.invalid"]
    engine.stream.send(1_700_000_001.0, _line(2))  # the stream brings it later: already held
    engine.stream.send(1_700_000_002.0, _line(3))
    assert _queries(_read_until(log, 3)) == ["q1.invalid", "q2.invalid", "q3.invalid"]
    log.close()


def test_once_the_stream_ended_each_read_asks_the_engine_again():
    engine = _Engine([(1_700_000_000.25, _line(1))])
    log = SinkLog(_Client(engine), "sink")  # type: ignore[arg-type]
    log.read()
    engine.stream.fed.put(_END)  # the container stopped, or the engine went away
    engine.log.append((1_700_000_001.0, _line(2)))
    deadline = time.monotonic() + 10
    while log._stream is not None and log._stream.running() and time.monotonic() < deadline:
        time.sleep(0.005)
    assert _queries(log.read()) == ["q1.invalid", "q2.invalid"]
    assert [asked.get("follow", False) for asked in engine.asked] == [False, True, False]


def test_close_ends_the_stream():
    engine = _Engine([(1_700_000_000.25, _line(1))])
    log = SinkLog(_Client(engine), "sink")  # type: ignore[arg-type]
    log.read()
    log.close()
    assert engine.stream.closed


def test_a_settled_first_read_opens_no_stream():
    """A scan without probes reads the log once, settled, at its end: nothing follows that read."""
    engine = _Engine([(1_700_000_000.25, _line(1))])
    log = SinkLog(_Client(engine), "sink")  # type: ignore[arg-type]
    assert _queries(log.read(settled=True)) == ["q1.invalid"]
    assert log._stream is None and [asked.get("follow", False) for asked in engine.asked] == [False]
