"""Install-phase egress: the install container reaches only the package registry, through a real proxy, and every
host it tried is recorded.

`start_install_proxy(session, allow_hosts)` creates, through the session (so teardown and `gc` remove them):

- a labelled `--internal` bridge network: no route off the machine;
- a proxy container from `images/proxy/` (Debian's squid + dnsmasq, non-root, no capabilities, read-only root)
  attached to that network *and* to the default bridge, so it alone reaches the registries. squid allows only
  CONNECT tunnels to the allowlisted hosts on the allowlisted ports (plain GET/HEAD only to an allowlisted port 80;
  its cache manager never) and logs one line per request with its verdict and a random per-start marker to stdout;
  dnsmasq answers every DNS query from the install container with NXDOMAIN and logs the name to stderr. Each stream
  is read for its own daemon's lines only, and squid's diagnostic log (which quotes client requests) is off.

The install container joins only the internal network, with `install_network_settings(proxy)`: the proxy variables
point at the proxy's address on that network and its resolver is the proxy's dnsmasq. A proxy-aware client reaches
the registry; anything else (another host through the proxy, a raw socket, a DNS lookup) fails and is recorded.

Behind a corporate proxy, `start_install_proxy(..., upstream=UpstreamProxy)` makes squid forward what it allows
through that proxy (a `cache_peer` parent; `never_direct`), except allowlisted hosts the host's NO_PROXY names
(`always_direct`); see sandbox/upstream_proxy.py. The allowlist and the log are the same either way. An upstream
the install network itself can reach (a proxy on the Docker host listening on a bridge address) is refused: a
throwaway container on that network tries it first (`upstream_probe_targets`).

The allowlist is data: `sandbox/assets/registries.json` (npm, pypi), overridable by a file passed as `config` or
named by MCP_SANDBOX_REGISTRIES, or by passing hosts to `start_install_proxy` directly.
"""

from __future__ import annotations

import hmac
import ipaddress
import json
import os
import re
import secrets
import socket
import time
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from docker.errors import APIError, NotFound
from requests.exceptions import RequestException

from sandbox import images
from sandbox.errors import SandboxError, UserInputError
from sandbox.images import DEFAULT_BASE_IMAGE
from sandbox.install_windows import Window, split_received, squid_started, window_at
from sandbox.policy import hardened_host_config
from sandbox.session import SandboxSession
from sandbox.upstream_proxy import HOST_GATEWAY, HOST_GATEWAY_NAME, UpstreamProxy, chain_settings, scrub

REGISTRIES_FILE = Path(__file__).resolve().parent / "assets" / "registries.json"
REGISTRIES_ENV = "MCP_SANDBOX_REGISTRIES"
PROXY_PORT = 3128
PROXY_ROLE = "install-proxy"
NETWORK_ROLE = "install"
READY_TIMEOUT_SECONDS = 30.0
DEFAULT_PORTS = (443,)
NO_PROXY = "localhost,127.0.0.1,::1"
MAX_HOST_CHARS = 253

_HOST_RE = re.compile(r"^\.?(?=.{1,253}$)[A-Za-z0-9](?:[A-Za-z0-9-]{0,61}[A-Za-z0-9])?(?:\.[A-Za-z0-9](?:[A-Za-z0-9-]{0,61}[A-Za-z0-9])?)*$")
# squid's access log (stdout): the per-start marker first, so only squid's own lines count (nothing else writes
# there, and no field of a line can hold a space or a line break a client chose).
_SQUID_LINE = re.compile(r"^MCPEGRESS (?P<marker>[A-Za-z0-9]+) (?P<time>\S+) (?P<client>\S+) (?P<method>\S+) "
                         r"(?P<host>\S+) (?P<port>\S+) (?P<status>\S+)/(?P<code>\S+)(?: (?P<bytes>\S+))?"
                         r"(?: (?P<elapsed>\d+))?$")
# dnsmasq's query log (stderr). A name may hold spaces (DNS labels are bytes), and dnsmasq writes one with
# unprintable bytes as `<name unprintable>`: the name is everything up to the last " from ". An unknown record type
# is written as `type=65`.
_DNS_LINE = re.compile(r"^dnsmasq\[\d+\]: query\[(?P<type>[A-Za-z0-9=]+)\] (?P<name>.+?) from (?P<client>\S+)$")
# Printed by the entry point once squid listens on 3128 and dnsmasq on 53 (squid's own log is off).
_READY = "MCPEGRESS-READY"
MARKER_BYTES = 16  # 32 hex characters; render-config.sh accepts 16-64 letters and digits
# The upstream reachability probe (_start_upstream_probe): one TCP connect per target, in parallel, each given
# this long. Every target that matters is an address of this machine, where a listening port answers at once.
PROBE_CONNECT_SECONDS = 1
PROBE_ROLE = "upstream-probe"
_PROBE_SCRIPT = ('for target in "$@"; do '
                 f'( timeout {PROBE_CONNECT_SECONDS} bash -c \'exec 3<>"/dev/tcp/${{1%:*}}/${{1##*:}}"\' probe '
                 '"$target" 2>/dev/null && echo "OPEN $target" ) & '
                 'done; wait')

ProgressFn = Callable[[str], None]


# --------------------------------------------------------------------------------------------------------- allowlist

@dataclass(frozen=True)
class RegistryAllowlist:
    hosts: tuple[str, ...]
    ports: tuple[int, ...] = DEFAULT_PORTS


def load_registries(config: Path | str | None = None) -> dict[str, RegistryAllowlist]:
    """The registry allowlists per ecosystem: from `config`, else the file named by MCP_SANDBOX_REGISTRIES, else the
    shipped defaults (sandbox/assets/registries.json). A bad file is the user's error (exit 2)."""
    path = Path(config or os.environ.get(REGISTRIES_ENV) or REGISTRIES_FILE)
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError) as exc:
        raise UserInputError(f"cannot read the registry allowlist {path}: {exc}") from None
    if not isinstance(data, dict):
        raise UserInputError(f"registry allowlist {path}: expected a JSON object of ecosystems")
    result: dict[str, RegistryAllowlist] = {}
    for ecosystem, entry in data.items():
        if ecosystem.startswith("_"):
            continue
        if not isinstance(entry, dict) or not isinstance(entry.get("hosts"), list):
            raise UserInputError(f"registry allowlist {path}: {ecosystem!r} needs a list of hosts")
        ports = entry.get("ports", list(DEFAULT_PORTS))
        try:
            result[ecosystem] = RegistryAllowlist(validate_hosts(entry["hosts"]), validate_ports(ports))
        except ValueError as exc:
            raise UserInputError(f"registry allowlist {path}: {ecosystem}: {exc}") from None
    return result


def registry_hosts(ecosystem: str, *, config: Path | str | None = None,
                   extra_hosts: Iterable[str] = ()) -> RegistryAllowlist:
    """The allowlist of one ecosystem (`npm`, `pypi`) from configuration, plus `extra_hosts` (e.g. a private mirror)."""
    registries = load_registries(config)
    if ecosystem not in registries:
        raise UserInputError(f"no registry allowlist for {ecosystem!r} (have: {', '.join(sorted(registries))})")
    entry = registries[ecosystem]
    return RegistryAllowlist(validate_hosts([*entry.hosts, *extra_hosts]), entry.ports)


def validate_hosts(hosts: Iterable[str]) -> tuple[str, ...]:
    """Lower-cased, de-duplicated host names; a name covered by a `.domain` entry is dropped (squid refuses both)."""
    cleaned: list[str] = []
    for host in hosts:
        if not isinstance(host, str) or not _HOST_RE.match(host) or _is_ip_literal(host.lstrip(".")):
            raise ValueError(f"not a host name: {host!r}")
        host = host.lower()
        if host not in cleaned:
            cleaned.append(host)
    wildcards = [h for h in cleaned if h.startswith(".")]
    kept = [h for h in cleaned
            if not any(h != w and (h == w[1:] or h.endswith(w)) for w in wildcards)]
    if not kept:
        raise ValueError("the allowlist is empty")
    return tuple(kept)


def validate_ports(ports: Iterable[Any]) -> tuple[int, ...]:
    result: list[int] = []
    for port in ports:
        if isinstance(port, bool) or not isinstance(port, int) or not 0 < port < 65536:
            raise ValueError(f"not a port: {port!r}")
        if port not in result:
            result.append(port)
    if not result:
        raise ValueError("no ports")
    return tuple(result)


def host_allowed(host: str, allow_hosts: Iterable[str]) -> bool:
    host = host.lower().rstrip(".")
    return any(host == h or (h.startswith(".") and (host == h[1:] or host.endswith(h))) for h in allow_hosts)


def _is_ip_literal(text: str) -> bool:
    return bool(re.fullmatch(r"[0-9.]+", text))


# ------------------------------------------------------------------------------------------------------------- proxy

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


@dataclass
class InstallProxy:
    session: SandboxSession
    container_id: str
    network: str
    address: str
    allow: RegistryAllowlist
    image: str
    start_seconds: float
    closed: bool = False
    upstream: UpstreamProxy | None = None  # what allowed requests are forwarded through (None: direct)
    # The random marker this proxy's squid writes on every access-log line (only such lines are read).
    log_marker: str = field(default="", repr=False)

    @property
    def proxy_url(self) -> str:
        return f"http://{self.address}:{PROXY_PORT}"

    def attempts(self, windows: Sequence[Window] = ()) -> list[EgressAttempt]:
        """Every host tried so far, grouped by (via, host, port, verdict, package, script) in first-seen order; with
        `windows` (the install's steps as the host ran them), each attempt names the step that was running.

        squid logs a request when it ends: call this after the install's processes have ended (their tunnels are
        closed then). The proxy's own log lines and the engine's timestamps on them are the only source; nothing the
        install container writes is trusted. Each daemon's lines are read from its own stream only: squid's access
        log (with this proxy's marker) from stdout, dnsmasq's queries from stderr.
        """
        api = self.session.client.api
        # Always with the engine's timestamps: they order the two streams' lines back into one sequence.
        access = api.logs(self.container_id, stdout=True, stderr=False, timestamps=True)
        queries = api.logs(self.container_id, stdout=False, stderr=True, timestamps=True)
        return parse_attempts(access.decode("utf-8", errors="replace"), self.allow.hosts, windows,
                              marker=self.log_marker, dns_log=queries.decode("utf-8", errors="replace"))

    def log_tail(self, lines: int = 20) -> str:
        raw = self.session.client.api.logs(self.container_id, stdout=True, stderr=True, tail=lines)
        return scrub(raw.decode("utf-8", errors="replace"), self.upstream.secrets() if self.upstream else ())

    def close(self) -> None:
        """Remove the proxy container and the internal network now (teardown would do it too)."""
        if self.closed:
            return
        self.session.remove_container(self.container_id)
        self.session.remove_network(self.network)
        self.closed = True


def start_install_proxy(session: SandboxSession, allow_hosts: Iterable[str] | RegistryAllowlist, *,
                        allow_ports: Iterable[int] | None = None, upstream: UpstreamProxy | None = None,
                        base_image: str = DEFAULT_BASE_IMAGE, ready_timeout: float = READY_TIMEOUT_SECONDS,
                        progress: ProgressFn | None = None) -> InstallProxy:
    """Create the session's internal network and start the egress proxy on it (and on the default bridge).

    `allow_hosts`: host names (`.example.org` = and its subdomains), or a RegistryAllowlist from registry_hosts().
    `upstream`: the user's proxy to forward allowed requests through (sandbox/upstream_proxy.py); the allowlist
    applies first either way. Its login is handed to the container on stdin, never in its configuration, and is
    scrubbed from any error text. With an upstream, a throwaway container on the new internal network first checks
    that the upstream cannot be reached from there (upstream_probe_targets): if it could, an install script
    could use it directly, past the allowlist and the log, and this refuses. Returns once squid accepts connections
    and dnsmasq answers; raises SandboxError (the session still owns and removes whatever was created).
    """
    started = time.monotonic()
    if isinstance(allow_hosts, RegistryAllowlist):
        allow = RegistryAllowlist(validate_hosts(allow_hosts.hosts),
                                  validate_ports(allow_ports if allow_ports is not None else allow_hosts.ports))
    else:
        allow = RegistryAllowlist(validate_hosts(allow_hosts),
                                  validate_ports(allow_ports if allow_ports is not None else DEFAULT_PORTS))
    image = images.ensure_runtime_image(session.client, "proxy", base_image=base_image, progress=progress)
    chain = chain_settings(upstream, allow.hosts)
    api = session.client.api
    network = session.create_network(NETWORK_ROLE, internal=True)
    # Started now, read after the proxy is up: its connect timeouts overlap the proxy's start-up.
    probe = _start_upstream_probe(session, image.tag, network, upstream) if upstream is not None else None
    marker = secrets.token_hex(MARKER_BYTES)
    host_config = hardened_host_config(
        api, memory_bytes=256 * 1024**2, nano_cpus=1_000_000_000, pids_limit=128,
        network_mode=network,
        read_only=True,
        tmpfs={"/tmp": "rw,nosuid,nodev,noexec,size=64m,mode=1777"},
        # dnsmasq binds port 53 as the unprivileged `proxy` user: allowed by this namespaced sysctl, no capability.
        sysctls={"net.ipv4.ip_unprivileged_port_start": "0"},
        # A loopback upstream (cntlm, px on 127.0.0.1) is the host's, reached at the default bridge's gateway.
        **({"extra_hosts": chain.extra_hosts} if chain.extra_hosts else {}),
    )
    container_id = session.create_container(
        PROXY_ROLE,
        image=image.tag,
        # The marker is in the proxy's environment, which only the engine's users can read (`docker inspect`): no
        # container, the install's included, can read another's.
        environment={"MCP_EGRESS_ALLOW_DOMAINS": " ".join(allow.hosts),
                     "MCP_EGRESS_ALLOW_PORTS": " ".join(str(p) for p in allow.ports),
                     "MCP_EGRESS_LOG_MARKER": marker, **chain.environment},
        host_config=host_config,
        stdin_open=chain.stdin is not None,  # docker-py then sets StdinOnce: stdin closes after our one write
    )
    # The default bridge is the proxy's only way out (to the registries or the upstream); connected before start.
    api.connect_container_to_network(container_id, "bridge")
    _start(api, container_id, chain.stdin)
    _wait_ready(session, container_id, ready_timeout, upstream.secrets() if upstream else ())
    networks = (api.inspect_container(container_id).get("NetworkSettings") or {}).get("Networks") or {}
    address = str((networks.get(network) or {}).get("IPAddress") or "")
    if not address:
        raise SandboxError(f"the install proxy has no address on {network}")
    _check_network(session, network)
    if probe is not None and upstream is not None:
        _finish_upstream_probe(session, probe, upstream)
    return InstallProxy(session=session, container_id=container_id, network=network, address=address, allow=allow,
                        image=image.tag, start_seconds=round(time.monotonic() - started, 3), upstream=upstream,
                        log_marker=marker)


def _start(api: Any, container_id: str, stdin: bytes | None) -> None:
    """Start the container; with `stdin`, attach to its stdin first and hand the bytes over once, then close it (the
    container was created with stdin_once, so its entry point reads them and then sees end of file)."""
    if stdin is None:
        api.start(container_id)
        return
    attached = api.attach_socket(container_id, params={"stdin": 1, "stream": 1})
    raw = getattr(attached, "_sock", attached)
    if not isinstance(raw, socket.socket):
        raise SandboxError(f"cannot hand the upstream login to the install proxy over a {type(raw).__name__}")
    try:
        api.start(container_id)
        raw.sendall(stdin)
    finally:
        try:
            raw.shutdown(socket.SHUT_RDWR)  # end of file for the entry point; nothing is read back
        except OSError:
            pass
        if attached is not raw:
            attached.close()  # docker-py's wrapper holds the descriptor too (see sandbox/run.py close_attach)
        raw.close()


def install_network_settings(proxy: InstallProxy) -> dict[str, Any]:
    """What the install container needs to use the proxy, and nothing else:

    - `network_mode`: the internal network (pass to create_host_config; the container joins no other network);
    - `dns`: the proxy's dnsmasq (every name is NXDOMAIN and logged; only the session network's container names
      resolve, answered by Docker's embedded DNS);
    - `environment`: proxy variables for npm, uv, pip, git, curl, Python and Node clients; they must override any
      proxy variables inherited from the host (an upstream proxy is not reachable from the internal network).
    """
    url = proxy.proxy_url
    env = {
        "HTTP_PROXY": url, "HTTPS_PROXY": url, "http_proxy": url, "https_proxy": url,
        "NO_PROXY": NO_PROXY, "no_proxy": NO_PROXY,
        "ALL_PROXY": url, "all_proxy": url,
        "NPM_CONFIG_PROXY": url, "NPM_CONFIG_HTTPS_PROXY": url, "NPM_CONFIG_NOPROXY": NO_PROXY,
    }
    return {"network_mode": proxy.network, "dns": [proxy.address], "environment": env}


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
        window = window_at(windows, began)
        full_key: AttemptKey = (*key, window.package if window else None, window.script if window else None)
        group = groups.setdefault(full_key, {"count": 0, "methods": [], "statuses": []})
        group["count"] += 1
        if method and method not in group["methods"]:
            group["methods"].append(method)
        if status and status not in group["statuses"]:
            group["statuses"].append(status)
    return [EgressAttempt(host=host, port=port, allowed=allowed, count=g["count"], via=via,
                          methods=tuple(g["methods"]), statuses=tuple(g["statuses"]), package=package, script=script)
            for (via, host, port, allowed, package, script), g in groups.items()]


def denied(attempts: Iterable[EgressAttempt]) -> list[EgressAttempt]:
    """The attempts that are I7 material: hosts outside the allowlist."""
    return [a for a in attempts if not a.allowed]


def _sort_time(line: str) -> float:
    """The engine's receipt time of a `--timestamps` line (0 without one: the order within a stream is kept)."""
    received, _ = split_received(line.strip())
    return received or 0.0


def _clean_host(text: str) -> str:
    text = text.rstrip(".").lower()
    text = "".join(ch if 0x21 <= ord(ch) < 0x7F else f"\\x{ord(ch):02x}" for ch in text)
    return text[:MAX_HOST_CHARS] or "-"


def _wait_ready(session: SandboxSession, container_id: str, timeout: float, secrets: tuple[str, ...] = ()) -> None:
    api = session.client.api
    deadline = time.monotonic() + timeout
    while True:
        log = api.logs(container_id, stdout=True, stderr=True).decode("utf-8", errors="replace")
        if _READY in log:
            return
        state = api.inspect_container(container_id).get("State") or {}
        if not state.get("Running") or "MCPEGRESS-ERROR" in log or time.monotonic() > deadline:
            tail = scrub(" | ".join(line.strip() for line in log.strip().splitlines()[-6:]), secrets)
            what = "exited" if not state.get("Running") else "did not become ready"
            raise SandboxError(f"the install egress proxy {what}: {tail or 'no output'}")
        time.sleep(0.05)


def _check_network(session: SandboxSession, network: str) -> None:
    """The install network must be internal (no route out): read back from the engine, not assumed."""
    try:
        info = session.client.api.inspect_network(network)
    except NotFound:
        raise SandboxError(f"the install network {network} vanished") from None
    if not info.get("Internal"):
        raise SandboxError(f"the engine did not make {network} internal; refusing to install on it")


# ---------------------------------------------------------------------------------------- upstream reachability

@dataclass(frozen=True)
class ProbeTarget:
    host: str  # what the probe container connects to (an IPv4 address, or host.docker.internal)
    port: int
    what: str  # how the message names it

    @property
    def address(self) -> str:
        return f"{self.host}:{self.port}"


@dataclass(frozen=True)
class _Probe:
    container_id: str
    targets: tuple[ProbeTarget, ...]


def upstream_probe_targets(upstream: UpstreamProxy, install_gateway: str | None,
                           resolve: Callable[[str], Sequence[str]] | None = None) -> tuple[ProbeTarget, ...]:
    """Where the install container could reach `upstream` directly: its address as the install proxy reaches it (a
    loopback upstream: the host gateway, `host.docker.internal`; a name: its IPv4 addresses, resolved on this host)
    and the install network's gateway (an address of the Docker host, where a host-local upstream listening on all
    interfaces answers too), each on the upstream's port. Loopback, unspecified and multicast answers are dropped:
    from a container they would be its own."""
    hosts: list[tuple[str, str]] = []
    if upstream.loopback:
        hosts.append((HOST_GATEWAY_NAME, "the Docker host's bridge gateway"))
    else:
        for address in (resolve or _resolve_ipv4)(upstream.host):
            try:
                ip = ipaddress.IPv4Address(address)
            except ValueError:
                continue
            if not (ip.is_loopback or ip.is_unspecified or ip.is_multicast):
                hosts.append((str(ip), "the upstream's address"))
    if install_gateway:
        hosts.append((install_gateway, "the install network's gateway, an address of the Docker host"))
    seen: set[str] = set()
    targets = []
    for host, what in hosts:
        if host not in seen:
            seen.add(host)
            targets.append(ProbeTarget(host, upstream.port, what))
    return tuple(targets)


def upstream_reachable_message(upstream: UpstreamProxy, reachable: Sequence[ProbeTarget]) -> str:
    """The one-line refusal when the install network reaches the upstream."""
    where = " and ".join(f"{t.address} ({t.what})" for t in reachable)
    return (f"the upstream proxy {upstream.redacted} is reachable from the isolated install network ({where} "
            "accepted a connection), so an install script could use it directly, bypassing the install proxy's "
            "allowlist and log; block Docker's user-defined bridges from that port on this host (e.g. `iptables -I "
            f"INPUT -i br-+ -p tcp --dport {upstream.port} -j DROP`, which leaves docker0, the install proxy's way "
            "to it, open) or run the upstream proxy on another host")


def _resolve_ipv4(host: str) -> list[str]:
    try:
        return [str(ipaddress.IPv4Address(host))]
    except ValueError:
        pass
    try:
        infos = socket.getaddrinfo(host, None, socket.AF_INET, socket.SOCK_STREAM)
    except (OSError, UnicodeError):
        return []  # then the install proxy cannot reach it either (its resolver forwards to this host's)
    return list(dict.fromkeys(str(info[4][0]) for info in infos))


def _network_gateway(session: SandboxSession, network: str) -> str | None:
    info = session.client.api.inspect_network(network)
    for config in (info.get("IPAM") or {}).get("Config") or []:
        gateway = str((config or {}).get("Gateway") or "").partition("/")[0]
        try:
            return str(ipaddress.IPv4Address(gateway))
        except ValueError:
            continue
    return None


def _start_upstream_probe(session: SandboxSession, image: str, network: str, upstream: UpstreamProxy) -> _Probe:
    """Start a throwaway container on the install network (hardened like the others, owned by the session) that
    tries a TCP connection to every target and prints `OPEN host:port` for each that accepts."""
    targets = upstream_probe_targets(upstream, _network_gateway(session, network))
    api = session.client.api
    host_config = hardened_host_config(
        api, memory_bytes=32 * 1024**2, nano_cpus=250_000_000, pids_limit=64, network_mode=network, read_only=True,
        **({"extra_hosts": {HOST_GATEWAY_NAME: HOST_GATEWAY}} if upstream.loopback else {}),
    )
    container_id = session.create_container(
        PROBE_ROLE, image=image, entrypoint=["bash", "-c", _PROBE_SCRIPT, "mcp-sandbox-probe"],
        command=[t.address for t in targets], host_config=host_config)
    api.start(container_id)
    return _Probe(container_id, targets)


def _finish_upstream_probe(session: SandboxSession, probe: _Probe, upstream: UpstreamProxy) -> None:
    """Wait for the probe, remove it, and refuse (SandboxError, one line) when any target accepted a connection."""
    api = session.client.api
    try:
        status = api.wait(probe.container_id, timeout=PROBE_CONNECT_SECONDS + 30)
        output = api.logs(probe.container_id, stdout=True, stderr=False).decode("utf-8", errors="replace")
    except (APIError, RequestException) as exc:  # the engine's error or timeout: no check, so no install
        raise SandboxError(f"could not check whether the upstream proxy is reachable from the install network: "
                           f"{exc}") from None
    finally:
        session.remove_container(probe.container_id)
    if int(status.get("StatusCode", -1)) != 0:
        raise SandboxError("could not check whether the upstream proxy is reachable from the install network "
                           f"(the probe exited with {status.get('StatusCode')})")
    opened = {line.split(" ", 1)[1].strip() for line in output.splitlines() if line.startswith("OPEN ")}
    reachable = [t for t in probe.targets if t.address in opened]
    if reachable:
        raise SandboxError(upstream_reachable_message(upstream, reachable))
