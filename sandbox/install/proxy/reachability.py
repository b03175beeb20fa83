"""Before an install with an upstream proxy: prove that the install network itself cannot reach that upstream (a
proxy on the Docker host listening on a bridge address would let an install script past the allowlist and the log)."""

from __future__ import annotations

import ipaddress
import socket
from collections.abc import Callable, Sequence
from dataclasses import dataclass

from docker.errors import APIError
from requests.exceptions import RequestException

from sandbox.core.errors import SandboxError
from sandbox.core.hardening import hardened_host_config
from sandbox.core.session import SandboxSession
from sandbox.install.proxy.upstream import HOST_GATEWAY, HOST_GATEWAY_NAME, UpstreamProxy

# The upstream reachability probe (start_upstream_probe): one TCP connect per target, in parallel, each given
# this long. Every target that matters is an address of this machine, where a listening port answers at once.
PROBE_CONNECT_SECONDS = 1

PROBE_ROLE = "upstream-probe"

_PROBE_SCRIPT = ('for target in "$@"; do '
                 f'( timeout {PROBE_CONNECT_SECONDS} bash -c \'exec 3<>"/dev/tcp/${{1%:*}}/${{1##*:}}"\' probe '
                 '"$target" 2>/dev/null && echo "OPEN $target" ) & '
                 'done; wait')


@dataclass(frozen=True)
class ProbeTarget:
    host: str  # what the probe container connects to (an IPv4 address, or host.docker.internal)
    port: int
    what: str  # how the message names it

    @property
    def address(self) -> str:
        return f"{self.host}:{self.port}"


@dataclass(frozen=True)
class UpstreamProbe:
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


def start_upstream_probe(session: SandboxSession, image: str, network: str,
                         upstream: UpstreamProxy) -> UpstreamProbe:
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
    return UpstreamProbe(container_id, targets)


def finish_upstream_probe(session: SandboxSession, probe: UpstreamProbe, upstream: UpstreamProxy) -> None:
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
