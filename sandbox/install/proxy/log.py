"""The install proxy's log, read back: every host the install tried (through squid, or by a DNS lookup), with its
verdict and the install step that was running when it began."""

from __future__ import annotations

import hmac
import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from typing import Any

from sandbox.core.untrusted import escape_host
from sandbox.install.proxy.allowlist import MAX_HOST_CHARS, host_allowed
from sandbox.install.windows import Window, split_received, squid_started, window_at

# squid's access log (stdout): the per-start marker first, so only squid's own lines count (nothing else writes
# there, and no field of a line can hold a space or a line break a client chose).
_SQUID_LINE = re.compile(r"^MCPEGRESS (?P<marker>[A-Za-z0-9]+) (?P<time>\S+) (?P<client>\S+) (?P<method>\S+) "
                         r"(?P<host>\S+) (?P<port>\S+) (?P<status>\S+)/(?P<code>\S+)(?: (?P<bytes>\S+))?"
                         r"(?: (?P<elapsed>\d+))?$")

# dnsmasq's query log (stderr). A name may hold spaces (DNS labels are bytes), and dnsmasq writes one with
# unprintable bytes as `<name unprintable>`: the name is everything up to the last " from ". An unknown record type
# is written as `type=65`.
_DNS_LINE = re.compile(r"^dnsmasq\[\d+\]: query\[(?P<type>[A-Za-z0-9=]+)\] (?P<name>.+?) from (?P<client>\S+)$")

# What the host reads of the proxy's log and keeps of it. An install script that floods the proxy (a lookup of a new
# name ~30,000 times a second) fills its log at ~1.3 MB/s: unbounded, 20 s of it cost the scanner 630 MB of memory,
# 105,000 I7 findings and a 20 MB image label. Only the first MAX_LOG_BYTES of each stream are read; past
# MAX_ATTEMPTS distinct attempts, each step's further hosts are counted in one attempt that says so.
MAX_LOG_BYTES = 4 * 1024 * 1024
MAX_ATTEMPTS = 500
OVERFLOW_HOST = f"more hosts past the first {MAX_ATTEMPTS} (not listed)"


@dataclass(frozen=True)
class EgressAttempt:
    """A host the install tried to reach. `via` is "proxy" (an HTTP request or CONNECT through squid; `port` set) or
    "dns" (a name looked up by a client that did not use the proxy; nothing is ever resolved, `port` is None).
    `allowed` is the proxy's verdict (for "dns": whether the name is on the allowlist)."""

    host: str
    port: int | None
    allowed: bool
    count: int
    via: str = "proxy"
    methods: tuple[str, ...] = ()
    statuses: tuple[str, ...] = field(default=(), metadata={"doc": "squid status/HTTP code, e.g. TCP_DENIED/403"})
    package: str | None = field(default=None, metadata={"doc": "name@version whose step was running (see Window)"})
    script: str | None = field(default=None, metadata={"doc": "its script(s), or the phase when no package's runs"})

AttemptKey = tuple[str, str, int | None, bool, str | None, str | None]


def parse_attempts(access_log: str, allow_hosts: Iterable[str], windows: Sequence[Window] = (), *, marker: str,
                   dns_log: str = "") -> list[EgressAttempt]:
    """Group squid access-log lines (`MCPEGRESS <marker> …`, from `access_log`: the proxy's stdout) and dnsmasq query
    lines (from `dns_log`: its stderr) into attempts. A squid line counts only in `access_log` and only with this
    proxy's `marker`; a dnsmasq line only in `dns_log`. With `windows`, the lines carry the engine's `--timestamps`
    prefix and each attempt is given to the step running when it began (sandbox/install_windows.py); an attempt with
    no window (or without windows) names no package or script."""
    allow_hosts = tuple(allow_hosts)
    groups: dict[AttemptKey, dict[str, Any]] = {}
    lines = [(True, raw) for raw in access_log.splitlines()] + [(False, raw) for raw in dns_log.splitlines()]
    lines.sort(key=lambda item: _sort_time(item[1]))  # first-seen order across both streams (a stable sort)
    for from_squid, raw_line in lines:
        received, line = split_received(raw_line.strip())
        line = line.strip()
        key: tuple[str, str, int | None, bool] | None = None
        began: float | None = None
        method = status = ""
        squid = _SQUID_LINE.match(line) if from_squid else None
        if squid and marker and hmac.compare_digest(squid["marker"], marker):
            host = _clean_host(squid["host"])
            port = int(squid["port"]) if squid["port"].isdigit() else None
            status = f"{squid['status']}/{squid['code']}"
            method = squid["method"]
            key = ("proxy", host, port, not squid["status"].startswith("TCP_DENIED") and host != "-"
                   and squid["code"] != "400")
            began = squid_started(squid["time"], squid["elapsed"])
        elif not from_squid:
            dns = _DNS_LINE.match(line)
            if dns:
                host = _clean_host(dns["name"])
                method = dns["type"]
                key = ("dns", host, None, host_allowed(host, allow_hosts))
                began = received
        if key is None:
            continue
        group = groups.setdefault(_group_key(groups, key, window_at(windows, began)),
                                  {"count": 0, "methods": [], "statuses": []})
        group["count"] += 1
        if method and method not in group["methods"]:
            group["methods"].append(method)
        if status and status not in group["statuses"]:
            group["statuses"].append(status)
    return [EgressAttempt(host=host, port=port, allowed=allowed, count=g["count"], via=via,
                          methods=tuple(g["methods"]), statuses=tuple(g["statuses"]), package=package, script=script)
            for (via, host, port, allowed, package, script), g in groups.items()]


def _group_key(groups: dict[AttemptKey, Any], key: tuple[str, str, int | None, bool],
               window: Window | None) -> AttemptKey:
    """The attempt a line counts in: its own, or once MAX_ATTEMPTS are kept and it is a new one, its step's
    OVERFLOW_HOST attempt (of the same verdict)."""
    step = (window.package if window else None, window.script if window else None)
    full_key: AttemptKey = (*key, *step)
    if full_key in groups or len(groups) < MAX_ATTEMPTS:
        return full_key
    return (key[0], OVERFLOW_HOST, None, key[3], *step)


def log_cut_attempt(via: str, max_bytes: int = MAX_LOG_BYTES) -> EgressAttempt:
    """The refused attempt that stands for what the proxy logged past the bound read (its log of `via`: "proxy",
    squid's requests; "dns", dnsmasq's lookups): unread, so never a pass."""
    what = "requests" if via == "proxy" else "lookups"
    return EgressAttempt(host=f"{what} past the first {max_bytes:,} bytes of the install proxy's log (not read)",
                         port=None, allowed=False, count=1, via=via)


def denied(attempts: Iterable[EgressAttempt]) -> list[EgressAttempt]:
    """The attempts that are I7 material: hosts outside the allowlist."""
    return [a for a in attempts if not a.allowed]


def _sort_time(line: str) -> float:
    """The engine's receipt time of a `--timestamps` line (0 without one: the order within a stream is kept)."""
    received, _ = split_received(line.strip())
    return received or 0.0


def _clean_host(text: str) -> str:
    text = text.rstrip(".").lower()
    return escape_host(text)[:MAX_HOST_CHARS] or "-"
