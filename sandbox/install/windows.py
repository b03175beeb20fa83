"""Attribution windows: which install step was running when the install proxy saw a host.

The host runs an install as steps, one at a time (sandbox/install_steps.py), and reads the engine's clock just before
starting each one: that instant opens the step's window, which lasts until the next window opens. A proxy log line
belongs to the last window opened at or before the moment its attempt began. That moment comes only from trusted
clocks, never from anything the install container prints:

- a squid line (`MCPEGRESS …`): squid's own log time minus its response time. squid logs a request when it ends, and
  a CONNECT tunnel can stay open for seconds, so the log time alone could fall into a later step;
- a dnsmasq query line: the engine's receipt timestamp of the line (`docker logs --timestamps`), a few milliseconds
  after the query.

squid, dnsmasq and the engine all read the clock of the engine's kernel, which no container can set. Between two
steps the host ends every process the previous step left behind and checks from outside the container that none is
left (else the install stops), so nothing of one step is still running when the next window opens. Without a usable
engine time no window opens (sandbox/install_phases.py): the host's clock is never used instead.
"""

from __future__ import annotations

import bisect
import calendar
import re
from collections.abc import Sequence
from dataclasses import dataclass

from sandbox.core.untrusted import escape_to_ascii

MAX_LABEL_CHARS = 200
_TRUNCATED = "…"

_RFC3339 = re.compile(r"^(?P<date>\d{4}-\d{2}-\d{2})T(?P<clock>\d{2}:\d{2}:\d{2})(?:\.(?P<fraction>\d+))?"
                      r"(?P<zone>Z|[+-]\d{2}:\d{2})$")
_TIMESTAMPED = re.compile(r"^(?P<stamp>\d{4}-\d{2}-\d{2}T\S+) (?P<line>.*)$")


@dataclass(frozen=True)
class Window:
    """One install step as the host ran it: opened at `begins` (the engine's clock, seconds since the epoch), with
    the package (`name@version`) and script it runs. A phase that runs no package's script (npm fetching the tree,
    uv resolving it) has `package` None and says what it is in `script`."""

    begins: float
    package: str | None
    script: str | None


def engine_time(text: str) -> float | None:
    """Seconds since the epoch of an RFC 3339 time as the engine writes it (`2026-11-29T21:36:15.460732244Z`, or with
    a `+01:00` offset); None when it is not one. Nanoseconds are kept as far as a float allows (~0.2 µs)."""
    match = _RFC3339.match(text.strip())
    if not match:
        return None
    year, month, day = (int(part) for part in match["date"].split("-"))
    hour, minute, second = (int(part) for part in match["clock"].split(":"))
    try:
        seconds = calendar.timegm((year, month, day, hour, minute, second, 0, 0, 0))
    except (ValueError, OverflowError):
        return None
    fraction = float(f"0.{match['fraction']}") if match["fraction"] else 0.0
    zone = match["zone"]
    offset = 0 if zone == "Z" else (int(zone[1:3]) * 3600 + int(zone[4:6]) * 60) * (1 if zone[0] == "+" else -1)
    return seconds + fraction - offset


def split_received(line: str) -> tuple[float | None, str]:
    """A `docker logs --timestamps` line as (engine receipt time, the line as the container wrote it). A line without
    the engine's prefix is returned whole, with no time."""
    match = _TIMESTAMPED.match(line)
    if match:
        received = engine_time(match["stamp"])
        if received is not None:
            return received, match["line"]
    return None, line


def squid_started(log_time: str, elapsed_ms: str | None) -> float | None:
    """When squid began a request: its log time (`%ts.%03tu`, when the request ended) minus its response time
    (`%tr`, milliseconds; the whole tunnel for a CONNECT). Without a response time, the log time."""
    try:
        ended = float(log_time)
    except ValueError:
        return None
    if elapsed_ms is None or not elapsed_ms.isdigit():
        return ended
    return ended - int(elapsed_ms) / 1000.0


def window_at(windows: Sequence[Window], when: float | None) -> Window | None:
    """The last window opened at or before `when` (`windows` in the order they were opened); None when `when` is
    unknown or comes before the first window (the install had not started: nothing of it can be the cause)."""
    if when is None or not windows:
        return None
    index = bisect.bisect_right([w.begins for w in windows], when) - 1
    return windows[index] if index >= 0 else None


def untrusted_label(text: str, limit: int = MAX_LABEL_CHARS) -> str:
    """A name or version read from a file the install wrote (lockfile, package.json), made safe to store and show:
    printable ASCII kept, everything else as a visible `\\xNN` / `\\uNNNN` escape, then capped to `limit`."""
    escaped = escape_to_ascii(text[: limit * 2])
    return escaped if len(escaped) <= limit else escaped[: limit - len(_TRUNCATED)] + _TRUNCATED
