"""Reading the egress sink's log a piece at a time: each read asks the engine only for the lines logged since the
last one it saw, so a scan that drains after every call reads each line about once instead of the whole log each
call (with `docker logs`, also one `inspect` fewer per read: docker-py asks whether the container has a tty).

Following (the default): after its first read (unless that one was settled: a scan's last), the log keeps one follow
stream open, read by a thread of its own, and a read takes what the stream brought, with no engine call (a probing
scan drains after every call: 55 engine calls, about 1 ms of the scanner's CPU and 0.5 ms of the engine's each, on
`server-filesystem`). A `settled` read asks the engine as well, as does every read once the stream ended or failed
(the container stopped, the engine went away): what the engine wrote to the log by then is read either way. The
stream starts where the reads before it left off (the same overlap), so a line is kept once whichever way it came.

The engine stamps every line it logged (`timestamps`, its own clock, so a remote engine's skew does not matter); a
read asks `since` the newest stamp seen, in whole seconds, less a margin (`OVERLAP_SECONDS`, so a line the engine
stamped before that one but wrote after it is read again rather than missed), and drops the lines it already holds:
a line is the same line when its stamp (nanoseconds) and its text are.
"""

from __future__ import annotations

import json
import re
import threading
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

import docker
from docker.errors import DockerException, create_api_error_from_http_exception
from requests.exceptions import HTTPError, RequestException

from sandbox.run.exec_stream import frame_payloads

OVERLAP_SECONDS = 2
# What ends a follow stream early: the engine's error or refusal, a broken or timed-out read, a stream closed mid-read.
STREAM_ERRORS = (DockerException, RequestException, OSError, ValueError)
_STAMP = re.compile(rb"(\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d)(?:\.\d+)?(Z|[+-]\d\d:\d\d)")


@dataclass
class SinkLog:
    """Every JSON object line the sink's container wrote to stdout so far, in order (`read` fetches the new ones)."""

    client: docker.DockerClient
    container_id: str
    follow: bool = True  # between settled reads, read the engine's follow stream (see the module)
    lines: list[dict[str, Any]] = field(default_factory=list)
    unreadable: int = 0  # lines that held no JSON object (the engine splits a message past 16 KiB, for one)
    _seen: dict[bytes, int] = field(default_factory=dict)  # the lines of the overlap already read: their seconds
    _newest: int | None = None  # the second of the engine's newest stamp read
    _lock: threading.Lock = field(default_factory=threading.Lock, repr=False)
    _stream: LogStream | None = field(default=None, repr=False)

    def read(self, *, settled: bool = False) -> list[dict[str, Any]]:
        """Every line so far: those held, the ones the follow stream brought, and (`settled`, the first read, or with
        no stream running) the new ones from the engine. Raises APIError as `docker logs` when the engine is asked."""
        with self._lock:
            stream = self._stream
            if stream is not None:
                self._take(stream.take())
            if settled or stream is None or not stream.running():
                self._take(_stamped_lines(self._fetch()))
            if self.follow and stream is None and not settled:  # a settled read is a scan's last: none follow it
                self._stream = LogStream.open(self.client, self.container_id, self._since())
            return list(self.lines)

    def close(self) -> None:
        """End the follow stream, if one is open (removing the sink's container ends it too)."""
        if self._stream is not None:
            self._stream.close()

    def _since(self) -> int | None:
        return None if self._newest is None else max(self._newest - OVERLAP_SECONDS, 1)

    def _take(self, stamped_lines: list[bytes]) -> None:
        for stamped in stamped_lines:
            if stamped in self._seen:
                continue
            stamp, _, text = stamped.partition(b" ")
            seconds = _seconds(stamp)
            if seconds is None:  # not a stamped line: kept as text, read again only if the engine repeats it
                seconds = self._newest or 0
            self._seen[stamped] = seconds
            self._newest = max(self._newest or 0, seconds)
            item = json_object(text)
            if item is not None:
                self.lines.append(item)
            elif text.strip():
                self.unreadable += 1
        oldest = (self._newest or 0) - OVERLAP_SECONDS - 1
        self._seen = {line: second for line, second in self._seen.items() if second >= oldest}

    def _fetch(self) -> bytes:
        api = self.client.api
        params: dict[str, Any] = {"stdout": 1, "stderr": 0, "timestamps": 1}
        if (since := self._since()) is not None:
            params["since"] = since
        url = f"{api.base_url}/v{api.api_version}/containers/{self.container_id}/logs"
        response = api.get(url, params=params, timeout=api.timeout)
        try:
            response.raise_for_status()
        except HTTPError as exc:
            raise create_api_error_from_http_exception(exc) from exc
        return response.content


class LogStream:
    """The engine's follow stream of the sink's stdout (stamped lines), read by a daemon thread into `take`'s buffer
    until it ends: the container was removed or stopped, `close` was called, or a read failed (the reads then ask the
    engine, which raises its error there)."""

    def __init__(self, chunks: Iterator[bytes], closer: Callable[[], object]) -> None:
        self._chunks, self._closer = chunks, closer
        self._lock = threading.Lock()
        self._received: list[bytes] = []  # the payloads since the last `take`
        self._partial = b""  # the start of a line the next payload ends
        self._running = True
        threading.Thread(target=self._pump, name="mcp-sandbox-sink-log", daemon=True).start()

    @classmethod
    def open(cls, client: docker.DockerClient, container_id: str, since: int | None) -> LogStream | None:
        """A stream from `since` (whole seconds; None: the log's start); None when the engine refused to open one
        (the reads then ask the engine, as without following)."""
        try:
            stream = client.api.logs(container_id, stdout=True, stderr=False, stream=True, follow=True,
                                     timestamps=True, since=since)
        except STREAM_ERRORS:
            return None
        return cls(iter(stream), stream.close)

    def running(self) -> bool:
        return self._running

    def take(self) -> list[bytes]:
        """The whole lines received since the last call (each `STAMP TEXT`)."""
        with self._lock:
            data, self._received = self._partial + b"".join(self._received), []
            *lines, self._partial = data.split(b"\n")
        return [line for line in lines if line]

    def close(self) -> None:
        self._closer()

    def _pump(self) -> None:
        try:
            for chunk in self._chunks:
                with self._lock:
                    self._received.append(chunk)
        except STREAM_ERRORS:
            pass  # ended early: `running` is False, and the next read asks the engine
        finally:
            self._running = False


def _stamped_lines(raw: bytes) -> list[bytes]:
    """The stream's stdout lines (the engine frames a container without a tty), each `STAMP TEXT`."""
    return [line for line in frame_payloads(raw, kinds=(1,)).split(b"\n") if line]


def _seconds(stamp: bytes) -> int | None:
    """The Unix second of an engine stamp (RFC 3339 with nanoseconds), None when it is not one."""
    found = _STAMP.fullmatch(stamp)
    if found is None:
        return None
    zone = found.group(2).decode()
    try:
        return int(datetime.fromisoformat(found.group(1).decode() + ("+00:00" if zone == "Z" else zone)).timestamp())
    except ValueError:
        return None


def json_object(text: bytes | str) -> dict[str, Any] | None:
    """One log line as the JSON object it holds; None when it holds something else."""
    try:
        item = json.loads(text.decode("utf-8", "replace") if isinstance(text, bytes) else text)
    except ValueError:
        return None
    return item if isinstance(item, dict) else None
