"""The "observe" network mode: a logging sink whose network namespace the run container joins.

The sink container (images/sink/) starts with `--network none`, so its namespace has no interface but `lo`. Before
the server starts, the sink gives `lo` the sink addresses and a default route, installs nftables NAT rules that
redirect every outbound TCP connection and all UDP (DNS included) to its own listeners, and drops to a non-root uid
with no capabilities. The run container joins that namespace (`network_mode="container:<sink id>"`): whatever the
server resolves or connects to is answered by the sink and logged, and nothing can leave the host, because no
interface leads anywhere. `Sink.events()` reads the log back as `EgressEvent`s.

Both containers are created through the `SandboxSession`, so its teardown (and `gc`) removes the sink too.
"""

from __future__ import annotations

import base64
import threading
import time
from collections.abc import Iterable
from concurrent.futures import Future
from dataclasses import dataclass, field
from typing import Any


from sandbox.core import images
from sandbox.core.errors import SandboxError
from sandbox.core.images import DEFAULT_BASE_IMAGE, ProgressFn
from sandbox.run.sink_log import SinkLog, json_object
from sandbox.run.policy import (LISTENER_CAP_SETS, STRICT_NETWORK, AppliedPolicy, SinkPolicy,
                               network_mode_allowed, own_name_hosts, read_applied)
from sandbox.core.hardening import hardened_host_config
from sandbox.core.session import SandboxSession

SINK_ROLE = "sink"
SINK_UID = 10003
READY_TIMEOUT_SECONDS = 30.0
READY_SCAN_BYTES = 1024 * 1024  # of one unfinished log line read while waiting for `ready`
# Only what setup.sh needs: NET_ADMIN for the address, route and nftables rules; SETUID/SETGID/SETPCAP for setpriv to
# drop to uid 10003 and empty the bounding set. The listener itself runs with no capability at all.
SINK_CAPABILITIES = ["NET_ADMIN", "SETGID", "SETPCAP", "SETUID"]
SINK_MEMORY_BYTES = 64 * 1024 * 1024
SINK_PIDS = 64
SINK_NANO_CPUS = 500_000_000
# The listener's note on a connection over its limit of connections at once (images/sink/listener.py), which it
# closes before reading a byte
CLOSED_UNREAD = "closed unread"
# Past it the engine rotates the log and drops what came before: the listener stops logging before its lines take
# 16 MiB of it (images/sink/listener.py LOG_BUDGET_BYTES), or after 2,000 events.
SINK_LOG_MAX_SIZE = "20m"
# IPv6 is off in Docker's containers by default; the sink enables it in its own namespace so AAAA answers and IPv6
# connections are observed too (sysctls are per network namespace, and net.* ones are allowed for non-host modes).
SINK_SYSCTLS = {"net.ipv6.conf.all.disable_ipv6": "0", "net.ipv6.conf.lo.disable_ipv6": "0"}
EVENT_KINDS = ("dns", "tcp", "udp")
@dataclass(frozen=True)
class EgressEvent:
    """One DNS query, TCP connection or UDP datagram the server sent, as the sink saw and answered it."""

    ts: float
    kind: str  # dns | tcp | udp
    host: str | None = None  # best name: the query (dns); SNI, else HTTP Host, else the name resolved (tcp)
    query: str | None = None
    qtype: str | None = None
    port: int | None = None
    original_dst: str | None = None  # "ip:port" / "[ip6]:port" the connection was headed for (tcp)
    resolved_name: str | None = None  # the name the sink's DNS gave that address for, if any
    protocol: str | None = None  # tls | http | unknown | none (tcp)
    sni: str | None = None
    alpn: tuple[str, ...] = ()
    http_host: str | None = None
    method: str | None = None
    path: str | None = None
    first_bytes: bytes = b""  # at most 4 KiB
    truncated: bool = False  # the client sent more than first_bytes
    note: str | None = None
    answer: str | None = None  # the sink address a DNS A/AAAA query was answered with (none: no records)
    transport: str | None = None  # udp | tcp (dns)
    bytes_read: int = 0  # how many bytes the sink read of a connection or datagram (it sends none back)
    raw: dict[str, Any] = field(default_factory=dict, compare=False, repr=False)

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> EgressEvent:
        def opt_str(name: str) -> str | None:
            value = data.get(name)
            return None if value is None else str(value)

        try:
            first = base64.b64decode(str(data.get("first_bytes") or ""), validate=True)
        except ValueError:
            first = b""
        port, read = data.get("port"), data.get("bytes")
        return cls(
            ts=float(data.get("ts") or 0.0), kind=str(data.get("kind")), host=opt_str("host"), query=opt_str("query"),
            qtype=opt_str("qtype"), port=int(port) if isinstance(port, int) else None,
            original_dst=opt_str("original_dst"), resolved_name=opt_str("resolved_name"),
            protocol=opt_str("protocol"), sni=opt_str("sni"), alpn=tuple(str(a) for a in data.get("alpn") or ()),
            http_host=opt_str("http_host"), method=opt_str("method"), path=opt_str("path"), first_bytes=first,
            truncated=bool(data.get("truncated")), note=opt_str("note"), answer=opt_str("answer"),
            transport=opt_str("transport"), bytes_read=read if isinstance(read, int) else len(first), raw=data,
        )


@dataclass
class Sink:
    session: SandboxSession
    container_id: str
    image: str
    start_seconds: float
    ready: dict[str, Any]
    started_at: float  # wall-clock time the sink became ready (comparable with EgressEvent.ts)
    applied: AppliedPolicy | None = None  # the container's policy as the engine applied it (checked before start)
    log: SinkLog | None = field(default=None, repr=False, compare=False)  # its log, read a piece at a time

    @property
    def network_mode(self) -> str:
        """What the run container joins: `RunPolicy(network_mode=sink.network_mode)`."""
        return f"container:{self.container_id}"

    def policy(self) -> SinkPolicy | None:
        """The applied container policy and the listener's identity (its `ready` line), for the report."""
        if self.applied is None:
            return None
        uid = self.ready.get("uid")
        return SinkPolicy(self.applied, uid if isinstance(uid, int) else None,
                          {name: str(self.ready.get(name)) for name in LISTENER_CAP_SETS if name in self.ready},
                          str(self.ready.get("NoNewPrivs")) == "1")

    def events(self, since: float | None = None, *, settled: bool = False) -> list[EgressEvent]:
        """Every dns/tcp/udp event logged so far (at or after `since`, a time.time() value), oldest first; `settled`:
        what the engine logged by now, asked of it (else what its follow stream brought: SinkLog).

        A TCP event is logged once the sink has read the connection's first bytes (at most ~2 s after the connect);
        its `ts` is the time the connection was accepted.
        """
        events = [EgressEvent.from_json(line) for line in self._lines(settled) if line.get("kind") in EVENT_KINDS]
        if since is not None:
            events = [e for e in events if e.ts >= since]
        return sorted(events, key=lambda e: e.ts)

    def gaps(self) -> list[str]:
        """What the log read so far may be missing, one line each: the sink's event cap reached (a server can use it
        up with cheap lookups, then act unseen), lines that are no JSON object (a line cut by the engine)."""
        if self.log is None:
            return []
        gaps = []
        limit = next((line for line in self.log.lines if line.get("kind") == "limit"), None)
        if limit is not None:
            gaps.append(_limit_gap(limit))
        if self.log.unreadable:
            gaps.append(f"{self.log.unreadable} lines of the egress sink's log could not be read: the network "
                        "attempts they held are not seen")
        unread = sum(1 for line in self.log.lines if line.get("kind") == "tcp" and CLOSED_UNREAD in str(line.get("note")))
        if unread:
            gaps.append(f"{_count(unread)} connections were closed unread, over the egress sink's limit of connections "
                        "at once: each attempt is seen, but what it would have sent was not searched for the planted "
                        "secrets")
        return gaps

    def running(self) -> bool:
        state = self.session.client.api.inspect_container(self.container_id).get("State") or {}
        return bool(state.get("Running"))

    def stop(self) -> None:
        """Remove the sink now (teardown of the session does it anyway)."""
        if self.log is not None:
            self.log.close()
        self.session.remove_container(self.container_id)

    def _lines(self, settled: bool = False) -> list[dict[str, Any]]:
        if self.log is None:
            self.log = SinkLog(self.session.client, self.container_id)
        return self.log.read(settled=settled)


def _limit_gap(limit: dict[str, Any]) -> str:
    """The sink's `limit` line as a gap: its event cap reached, or its log's size (then after how many events)."""
    if limit.get("reason") == "log size":
        what = f"after {_count(limit.get('events'))} events, its log's size cap reached"
    else:
        what = f"after its {_count(limit.get('max_events'))} events"
    return (f"the egress sink stopped logging {what} (at {_clock(limit.get('ts'))}): network attempts after that "
            "were answered but not seen")


def _count(value: Any) -> str:
    return f"{value:,}" if isinstance(value, int) and not isinstance(value, bool) else "?"


def _clock(ts: Any) -> str:
    """An event's time as the report's readers compare it (UTC, to the millisecond)."""
    if not isinstance(ts, (int, float)) or isinstance(ts, bool):
        return "an unknown time"
    return time.strftime("%H:%M:%S", time.gmtime(ts)) + f".{int(ts * 1000) % 1000:03d} UTC"


def _parse_lines(raw: bytes) -> list[dict[str, Any]]:
    return [item for line in raw.decode("utf-8", "replace").splitlines() if (item := json_object(line)) is not None]


# --- starting the sink ---------------------------------------------------------------------------------------------

def start_sink(session: SandboxSession, *, base_image: str = DEFAULT_BASE_IMAGE,
               ready_timeout: float = READY_TIMEOUT_SECONDS, progress: ProgressFn | None = None,
               hostname: str | None = None) -> Sink:
    """Create and start the sink container of this session and wait until its listeners are up, privileges dropped.
    `hostname` is the host name the run containers that join its namespace see (RunPolicy.hostname).

    Raises SandboxError if the sink does not come up, or comes up with a uid or capabilities it should not have.
    """
    pending = launch_sink(session, base_image=base_image, progress=progress, hostname=hostname)
    return pending.wait_ready(ready_timeout)


@dataclass(frozen=True)
class LaunchedSink:
    """A sink container started (or being started by another thread: `started`), its listeners maybe not up yet: a
    run container may already be created in its namespace (`network_mode`), and must not start before `wait_ready`
    returned."""

    session: SandboxSession
    container_id: str
    image: str
    began: float
    inspect: dict[str, Any]
    started: Future[Any] | None = None  # the other thread's start, awaited (its failure raised) before the readiness

    @property
    def network_mode(self) -> str:
        return f"container:{self.container_id}"

    def wait_ready(self, ready_timeout: float = READY_TIMEOUT_SECONDS) -> Sink:
        """Wait until the listeners are up and the privileges dropped (SandboxError if they are not)."""
        if self.started is not None:
            self.started.result()
        ready = _wait_ready(self.session, self.container_id, ready_timeout)
        return Sink(self.session, self.container_id, self.image, round(time.monotonic() - self.began, 3), ready,
                    time.time(), read_applied(self.inspect))


def launch_sink(session: SandboxSession, *, base_image: str = DEFAULT_BASE_IMAGE, progress: ProgressFn | None = None,
                hostname: str | None = None) -> LaunchedSink:
    """Create the sink container, check its policy as applied, and start it (without waiting for its listeners)."""
    return start_created(create_sink(session, base_image=base_image, progress=progress, hostname=hostname))


def start_created(created: LaunchedSink) -> LaunchedSink:
    """Start a sink `create_sink` made (without waiting for its listeners: `wait_ready`)."""
    created.session.client.api.start(created.container_id)
    return created


def create_sink(session: SandboxSession, *, base_image: str = DEFAULT_BASE_IMAGE, progress: ProgressFn | None = None,
                hostname: str | None = None, build: bool = True) -> LaunchedSink:
    """Create the sink container and check its policy as applied, not started: a run container can be created in its
    namespace while another thread starts it (`LaunchedSink.started`). `build` False: ImageMissing when the sink's
    image is not built yet."""
    api = session.client.api
    image = images.ensure_runtime_image(session.client, "sink", base_image=base_image, progress=progress, build=build)
    began = time.monotonic()
    container_id = session.create_container(
        SINK_ROLE,
        image=image.tag,
        user="0:0",
        network_disabled=False,
        hostname=hostname,
        host_config=hardened_host_config(
            api, memory_bytes=SINK_MEMORY_BYTES, nano_cpus=SINK_NANO_CPUS, pids_limit=SINK_PIDS, init=False,
            network_mode="none",
            extra_hosts=own_name_hosts(hostname),  # the run containers in its namespace read this /etc/hosts
            cap_add=SINK_CAPABILITIES,
            read_only=True,
            binds=[],
            ipc_mode="private",
            sysctls=SINK_SYSCTLS,
            log_config={"type": "json-file", "config": {"max-size": SINK_LOG_MAX_SIZE, "max-file": "1"}},
        ),
    )
    inspect = api.inspect_container(container_id)
    _check_sink_policy(inspect)
    return LaunchedSink(session, container_id, image.tag, began, inspect)


def _check_sink_policy(inspect: dict[str, Any]) -> None:
    host = inspect.get("HostConfig") or {}
    problems = []
    if host.get("NetworkMode") != "none":
        problems.append(f"network {host.get('NetworkMode')!r}")
    if "ALL" not in (host.get("CapDrop") or []) or sorted(host.get("CapAdd") or []) != SINK_CAPABILITIES:
        problems.append(f"capabilities drop={host.get('CapDrop')} add={host.get('CapAdd')}")
    if host.get("Privileged") or not host.get("ReadonlyRootfs"):
        problems.append("privileged or writable root")
    if not any(opt.startswith("no-new-privileges") for opt in host.get("SecurityOpt") or []):
        problems.append("no-new-privileges missing")
    if [m for m in inspect.get("Mounts") or [] if m.get("Type") != "tmpfs"]:
        problems.append("mounts present")
    if problems:
        raise SandboxError("the engine did not apply the sink's policy: " + "; ".join(problems))


def _wait_ready(session: SandboxSession, container_id: str, timeout: float) -> dict[str, Any]:
    """The listener's `ready` line, read off the sink's log as the engine writes it (one follow stream, no polling:
    the server starts as soon as the sink is ready); SandboxError when the sink exited first or `timeout` passed."""
    api = session.client.api
    stream = api.logs(container_id, stdout=True, stderr=False, stream=True, follow=True)
    timer = threading.Timer(timeout, stream.close)  # ends the iteration below at the deadline
    timer.start()
    try:
        ready = _ready_line(stream)
    except (OSError, ValueError):  # the stream broke (the engine went away) or was closed mid-read at the deadline
        ready = None
    finally:
        timer.cancel()
        stream.close()
    if ready is not None:
        _check_ready(ready)
        return ready
    state = api.inspect_container(container_id).get("State") or {}
    if not state.get("Running"):
        err = api.logs(container_id, stdout=False, stderr=True).decode("utf-8", "replace").strip()
        raise SandboxError(f"the egress sink exited ({state.get('ExitCode')}) before it was ready: {err[-500:]}")
    raise SandboxError(f"the egress sink was not ready after {timeout:.0f} s")


def _ready_line(chunks: Iterable[bytes]) -> dict[str, Any] | None:
    """The first `ready` event among the log lines `chunks` carry (a line may span chunks), or None when they end
    first (the sink exited, or the stream was closed). Lines before it are bounded by READY_SCAN_BYTES."""
    pending = b""
    for chunk in chunks:
        *lines, pending = (pending + chunk).split(b"\n")
        for line in _parse_lines(b"\n".join(lines)):
            if line.get("kind") == "ready":
                return line
        if len(pending) > READY_SCAN_BYTES:
            return None
    return next((line for line in _parse_lines(pending) if line.get("kind") == "ready"), None)


def _check_ready(ready: dict[str, Any]) -> None:
    """The listener reports its uid and capability sets; it must have kept nothing."""
    caps = {name: ready.get(name) for name in LISTENER_CAP_SETS}
    if ready.get("uid") != SINK_UID or any(value is None or int(str(value), 16) != 0 for value in caps.values()):
        raise SandboxError(f"the egress sink did not drop its privileges: uid {ready.get('uid')}, {caps}")


def is_sink_network_mode(network_mode: str) -> bool:
    """Whether a network mode joins a sink's namespace (`container:` + a full 64-hex container id)."""
    return network_mode != STRICT_NETWORK and network_mode_allowed(network_mode)
