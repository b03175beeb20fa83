"""The sink's log read a piece at a time (sandbox/run/sink_log.py): each read asks the engine `since` the newest
stamp it saw less the overlap, keeps every line once, and asks no `inspect`. The engine is a stand-in that keeps a
stamped log and answers `since` as the engine does (whole seconds, inclusive); the live read is
tests/test_egress_sink.py's."""

from __future__ import annotations

import json
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
                text = datetime.fromtimestamp(stamp, timezone.utc).strftime("%Y-%m-%dT%H:%M:%S.%f000Z").encode()
                payload = text + b" " + line + b"\n"
                out += FRAME.pack(1, len(payload)) + payload
        return _Response(out, self.status)

    def inspect_container(self, _container: str) -> dict[str, Any]:
        raise AssertionError("the read asks no inspect")


@dataclass
class _Client:
    api: _Engine


def _line(n: int) -> bytes:
    return json.dumps({"ts": 1000.0 + n, "kind": "dns", "query": f"q{n}.invalid"}).encode()


def test_each_read_asks_for_the_new_lines_and_keeps_every_line_once():
    engine = _Engine([(1_700_000_000.25, b'{"kind": "ready"}'), (1_700_000_000.5, _line(1))])
    log = SinkLog(_Client(engine), "sink")  # type: ignore[arg-type]
    assert [line["kind"] for line in log.read()] == ["ready", "dns"]
    engine.log += [(1_700_000_001.75, _line(2)), (1_700_000_001.75, b"not json"), (1_700_000_009.0, _line(3))]
    assert [line.get("query") for line in log.read()] == [None, "q1.invalid", "q2.invalid", "q3.invalid"]
    assert engine.asked[0].get("since") is None and engine.asked[1]["since"] == 1_700_000_000 - OVERLAP_SECONDS
    engine.log.append((1_700_000_009.5, _line(4)))
    assert [line.get("query") for line in log.read()][-2:] == ["q3.invalid", "q4.invalid"]
    assert engine.asked[2]["since"] == 1_700_000_009 - OVERLAP_SECONDS


def test_a_line_stamped_just_before_the_newest_but_written_after_it_is_not_missed():
    engine = _Engine([(1_700_000_005.9, _line(1))])
    log = SinkLog(_Client(engine), "sink")  # type: ignore[arg-type]
    log.read()
    engine.log.insert(0, (1_700_000_005.1, _line(0)))  # the engine wrote it late, within the overlap
    assert sorted(line["query"] for line in log.read()) == ["q0.invalid", "q1.invalid"]


def test_the_engine_refusing_is_an_api_error():
    log = SinkLog(_Client(_Engine(status=404)), "sink")  # type: ignore[arg-type]
    with pytest.raises(APIError):
        log.read()
