"""Reading the egress sink's log a piece at a time: each read asks the engine only for the lines logged since the
last one it saw, so a scan that drains after every call reads each line about once instead of the whole log each
call (with `docker logs`, also one `inspect` fewer per read: docker-py asks whether the container has a tty).

The engine stamps every line it logged (`timestamps`, its own clock, so a remote engine's skew does not matter); a
read asks `since` the newest stamp seen, in whole seconds, less a margin (`OVERLAP_SECONDS`, so a line the engine
stamped before that one but wrote after it is read again rather than missed), and drops the lines it already holds:
a line is the same line when its stamp (nanoseconds) and its text are.
"""

from __future__ import annotations

import json
import re
import threading
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

import docker
from docker.errors import create_api_error_from_http_exception
from requests.exceptions import HTTPError

from sandbox.run.exec_stream import frame_payloads

OVERLAP_SECONDS = 2
_STAMP = re.compile(rb"(\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d)(?:\.\d+)?(Z|[+-]\d\d:\d\d)")


@dataclass
class SinkLog:
    """Every JSON object line the sink's container wrote to stdout so far, in order (`read` fetches the new ones)."""

    client: docker.DockerClient
    container_id: str
    lines: list[dict[str, Any]] = field(default_factory=list)
    _seen: dict[bytes, int] = field(default_factory=dict)  # the lines of the overlap already read: their seconds
    _newest: int | None = None  # the second of the engine's newest stamp read
    _lock: threading.Lock = field(default_factory=threading.Lock, repr=False)

    def read(self) -> list[dict[str, Any]]:
        """Every line so far: those held, and the new ones from the engine (raises APIError as `docker logs`)."""
        with self._lock:
            return list(self._read())

    def _read(self) -> list[dict[str, Any]]:
        for stamped in _stamped_lines(self._fetch()):
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
        oldest = (self._newest or 0) - OVERLAP_SECONDS - 1
        self._seen = {line: second for line, second in self._seen.items() if second >= oldest}
        return self.lines

    def _fetch(self) -> bytes:
        api = self.client.api
        params: dict[str, Any] = {"stdout": 1, "stderr": 0, "timestamps": 1}
        if self._newest is not None:
            params["since"] = max(self._newest - OVERLAP_SECONDS, 1)
        url = f"{api.base_url}/v{api.api_version}/containers/{self.container_id}/logs"
        response = api.get(url, params=params, timeout=api.timeout)
        try:
            response.raise_for_status()
        except HTTPError as exc:
            raise create_api_error_from_http_exception(exc) from exc
        return response.content


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
