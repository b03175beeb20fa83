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

The allowlist is data: `registries.json` beside allowlist.py (npm, pypi), overridable by a file passed as `config` or
named by MCP_SANDBOX_REGISTRIES, or by passing hosts to `start_install_proxy` directly.
"""

from __future__ import annotations

import secrets
import socket
import time
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from typing import Any

from docker.errors import NotFound

from sandbox.core import images
from sandbox.core.errors import SandboxError
from sandbox.core.hardening import hardened_host_config
from sandbox.core.images import DEFAULT_BASE_IMAGE
from sandbox.core.session import SandboxSession
from sandbox.install.proxy.allowlist import DEFAULT_PORTS, RegistryAllowlist, validate_hosts, validate_ports
from sandbox.install.proxy.log import MAX_LOG_BYTES, EgressAttempt, log_cut_attempt, parse_attempts
from sandbox.install.proxy.reachability import UpstreamProbe, finish_upstream_probe, start_upstream_probe
from sandbox.install.proxy.upstream import ChainSettings, UpstreamProxy, chain_settings, scrub
from sandbox.install.windows import Window

PROXY_PORT = 3128
PROXY_ROLE = "install-proxy"
NETWORK_ROLE = "install"
READY_TIMEOUT_SECONDS = 30.0
NO_PROXY = "localhost,127.0.0.1,::1"

# Printed by the entry point once squid listens on 3128 and dnsmasq on 53 (squid's own log is off).
_READY = "MCPEGRESS-READY"
MARKER_BYTES = 16  # 32 hex characters; render-config.sh accepts 16-64 letters and digits

ProgressFn = Callable[[str], None]


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
    # Until wait_ready() has returned: when to give up waiting, and the upstream probe still to be read.
    ready: bool = True
    ready_deadline: float = 0.0
    pending_probe: UpstreamProbe | None = field(default=None, repr=False)
    started: float = field(default=0.0, repr=False)

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
        # Always with the engine's timestamps: they order the two streams' lines back into one sequence. Each stream
        # is read up to MAX_LOG_BYTES; what lies past it is one refused attempt that says so (log_cut_attempt).
        access, access_cut = bounded_log(api, self.container_id, stdout=True)
        queries, queries_cut = bounded_log(api, self.container_id, stdout=False)
        attempts = parse_attempts(access, self.allow.hosts, windows, marker=self.log_marker, dns_log=queries)
        return attempts + [log_cut_attempt(via, MAX_LOG_BYTES) for via, cut in (("proxy", access_cut),
                                                                                 ("dns", queries_cut)) if cut]

    def log_tail(self, lines: int = 20) -> str:
        raw = self.session.client.api.logs(self.container_id, stdout=True, stderr=True, tail=lines)
        return scrub(raw.decode("utf-8", errors="replace"), self.upstream.secrets() if self.upstream else ())

    def wait_ready(self) -> None:
        """Return once squid accepts connections and dnsmasq answers, the network is read back as internal and (with
        an upstream) the upstream was found unreachable from it; raises SandboxError. No install step may run before."""
        if self.ready:
            return
        secrets = self.upstream.secrets() if self.upstream else ()
        _wait_ready(self.session, self.container_id, self.ready_deadline - time.monotonic(), secrets)
        _check_network(self.session, self.network)
        if self.pending_probe is not None and self.upstream is not None:
            finish_upstream_probe(self.session, self.pending_probe, self.upstream)
        self.pending_probe = None
        self.ready = True
        self.start_seconds = round(time.monotonic() - self.started, 3)

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
    proxy = launch_install_proxy(session, allow_hosts, allow_ports=allow_ports, upstream=upstream,
                                 base_image=base_image, ready_timeout=ready_timeout, progress=progress)
    proxy.wait_ready()
    return proxy


def launch_install_proxy(session: SandboxSession, allow_hosts: Iterable[str] | RegistryAllowlist, *,
                         allow_ports: Iterable[int] | None = None, upstream: UpstreamProxy | None = None,
                         base_image: str = DEFAULT_BASE_IMAGE, ready_timeout: float = READY_TIMEOUT_SECONDS,
                         progress: ProgressFn | None = None) -> InstallProxy:
    """start_install_proxy up to the proxy container's start, when its address on the internal network is known:
    squid and dnsmasq boot in it while the caller prepares the install container, and `wait_ready()` (before any
    install step) finishes what start_install_proxy does."""
    started = time.monotonic()
    allow = _allowlist(allow_hosts, allow_ports)
    image = images.ensure_runtime_image(session.client, "proxy", base_image=base_image, progress=progress)
    chain = chain_settings(upstream, allow.hosts)
    api = session.client.api
    network = session.create_network(NETWORK_ROLE, internal=True)
    # Started now, read in wait_ready(): its connect timeouts overlap the proxy's start-up.
    probe = start_upstream_probe(session, image.tag, network, upstream) if upstream is not None else None
    marker = secrets.token_hex(MARKER_BYTES)
    container_id = _create_proxy_container(session, image.tag, network, allow, marker, chain)
    # The default bridge is the proxy's only way out (to the registries or the upstream); connected before start.
    api.connect_container_to_network(container_id, "bridge")
    _start(api, container_id, chain.stdin)
    address = _address_on(api, container_id, network)
    return InstallProxy(session=session, container_id=container_id, network=network, address=address, allow=allow,
                        image=image.tag, start_seconds=0.0, upstream=upstream, log_marker=marker, ready=False,
                        ready_deadline=time.monotonic() + ready_timeout, pending_probe=probe, started=started)


def _allowlist(allow_hosts: Iterable[str] | RegistryAllowlist, allow_ports: Iterable[int] | None) -> RegistryAllowlist:
    """The hosts and ports the proxy allows, validated; ports given explicitly win over the allowlist's own."""
    if isinstance(allow_hosts, RegistryAllowlist):
        return RegistryAllowlist(validate_hosts(allow_hosts.hosts),
                                 validate_ports(allow_ports if allow_ports is not None else allow_hosts.ports))
    return RegistryAllowlist(validate_hosts(allow_hosts),
                             validate_ports(allow_ports if allow_ports is not None else DEFAULT_PORTS))


def bounded_log(api: Any, container_id: str, *, stdout: bool, max_bytes: int | None = None) -> tuple[str, bool]:
    """The first `max_bytes` (default MAX_LOG_BYTES) of the container's stdout (or stderr) log, with the engine's
    timestamps, in whole log lines (the engine's frames), and whether there was more: the rest is never read."""
    max_bytes = MAX_LOG_BYTES if max_bytes is None else max_bytes
    stream = api.logs(container_id, stdout=stdout, stderr=not stdout, timestamps=True, stream=True, follow=False)
    kept, cut = bytearray(), False
    try:
        for frame in stream:
            if len(kept) + len(frame) > max_bytes:
                cut = True
                break
            kept.extend(frame)
    finally:
        close = getattr(stream, "close", None)
        if callable(close):
            close()
    return kept.decode("utf-8", errors="replace"), cut


def _create_proxy_container(session: SandboxSession, image: str, network: str, allow: RegistryAllowlist, marker: str,
                            chain: ChainSettings) -> str:
    """The hardened proxy container on the internal network (created, not started); returns its id."""
    host_config = hardened_host_config(
        session.client.api, memory_bytes=256 * 1024**2, nano_cpus=1_000_000_000, pids_limit=128,
        network_mode=network,
        read_only=True,
        tmpfs={"/tmp": "rw,nosuid,nodev,noexec,size=64m,mode=1777"},
        # dnsmasq binds port 53 as the unprivileged `proxy` user: allowed by this namespaced sysctl, no capability.
        sysctls={"net.ipv4.ip_unprivileged_port_start": "0"},
        # A loopback upstream (cntlm, px on 127.0.0.1) is the host's, reached at the default bridge's gateway.
        **({"extra_hosts": chain.extra_hosts} if chain.extra_hosts else {}),
    )
    return session.create_container(
        PROXY_ROLE,
        image=image,
        # The marker is in the proxy's environment, which only the engine's users can read (`docker inspect`): no
        # container, the install's included, can read another's.
        environment={"MCP_EGRESS_ALLOW_DOMAINS": " ".join(allow.hosts),
                     "MCP_EGRESS_ALLOW_PORTS": " ".join(str(p) for p in allow.ports),
                     "MCP_EGRESS_LOG_MARKER": marker, **chain.environment},
        host_config=host_config,
        stdin_open=chain.stdin is not None,  # docker-py then sets StdinOnce: stdin closes after our one write
    )


def _address_on(api: Any, container_id: str, network: str) -> str:
    """The proxy's address on the internal network, as the engine reports it."""
    networks = (api.inspect_container(container_id).get("NetworkSettings") or {}).get("Networks") or {}
    address = str((networks.get(network) or {}).get("IPAddress") or "")
    if not address:
        raise SandboxError(f"the install proxy has no address on {network}")
    return address


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
