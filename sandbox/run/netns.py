"""The network namespace the server runs in, as read from inside it: its interfaces (with their addresses and byte
counters) and its routes, so a report shows the containment instead of asking the reader to infer it.

`sandbox.run.observe.network_namespace` runs one Docker exec as the run uid that prints five /proc/net files (the runtime images have no `ip`; /proc/net is per network
namespace, so it shows the server's): `dev` (interfaces, bytes), `if_inet6` (IPv6 addresses, by interface),
`fib_trie` (the local IPv4 addresses; it names no interface), `route` and `ipv6_route`. In the strict mode the
namespace holds only `lo` with 127.0.0.1; in the observe mode (the sink's namespace) `lo` also carries the sink
addresses and the default routes lead to `lo`. `off_host` lists whatever could lead anywhere else.

This module is the model (also the report's: scanner.report.SandboxInfo.namespace, like AppliedPolicy) and the
parser of that output; it never reaches the engine.
"""

from __future__ import annotations

import ipaddress
import socket
import struct
from dataclasses import dataclass, field

NETNS_FILES = ("/proc/net/dev", "/proc/net/if_inet6", "/proc/net/fib_trie", "/proc/net/route", "/proc/net/ipv6_route")
_MARK = "@@MCP-SANDBOX-NETNS@@ "
# Each file after a line naming it; at most 64 KiB of each.
NETNS_SCRIPT = "for f in " + " ".join(NETNS_FILES) + f"; do printf '\\n{_MARK}%s\\n' \"$f\"; head -c 65536 \"$f\"; done; true"
MAX_ITEMS = 64  # interfaces, addresses and routes each: a namespace with more is already not ours
LOOPBACK = "lo"
RTF_UP, RTF_GATEWAY, RTF_REJECT = 0x1, 0x2, 0x200
RTF_CACHE, RTF_LOCAL = 0x01000000, 0x80000000
IP6_NULL_METRIC = 0xFFFFFFFF  # the kernel's own catch-all reject entry, present in every namespace


@dataclass(frozen=True)
class Interface:
    """One interface of the namespace (/proc/net/dev), with its IPv6 addresses (/proc/net/if_inet6)."""

    name: str
    rx_bytes: int
    tx_bytes: int
    ipv6: list[str] = field(default_factory=list)


@dataclass(frozen=True)
class Route:
    """One configured route (/proc/net/route, /proc/net/ipv6_route; the kernel's local-table entries left out)."""

    family: str  # ipv4 | ipv6
    destination: str  # a prefix: 0.0.0.0/0 and ::/0 are the default routes
    device: str
    gateway: str | None = None


@dataclass(frozen=True)
class NetworkNamespace:
    """The server's network namespace as read from inside it, at start."""

    interfaces: list[Interface]
    ipv4: list[str] = field(metadata={"description": "The namespace's IPv4 addresses with their prefix "
                                      "(/proc/net/fib_trie, which names no interface)."})
    routes: list[Route]
    off_host: list[str] = field(metadata={"description": "Every interface other than lo and every route through one "
                                          "or via a gateway: what could lead off the host. Empty: nothing does."})


class NamespaceUnread(ValueError):
    """The exec's output holds no interface list: the namespace was not read."""


def parse_namespace(text: str) -> NetworkNamespace:
    """The namespace from NETNS_SCRIPT's output. Raises NamespaceUnread without /proc/net/dev in it."""
    files = _split(text)
    if "/proc/net/dev" not in files:
        raise NamespaceUnread("the server's network namespace could not be read (no /proc/net/dev in the output)")
    v6 = _if_inet6(files.get("/proc/net/if_inet6", ""))
    interfaces = [Interface(name, rx, tx, v6.get(name, [])) for name, rx, tx in _dev(files["/proc/net/dev"])]
    routes = [*_routes4(files.get("/proc/net/route", "")), *_routes6(files.get("/proc/net/ipv6_route", ""))]
    off = [f"interface {i.name}" for i in interfaces if i.name != LOOPBACK]
    off += [f"route {r.destination} via {r.gateway or r.device}" for r in routes
            if r.device != LOOPBACK or r.gateway]
    return NetworkNamespace(interfaces[:MAX_ITEMS], _fib_addresses(files.get("/proc/net/fib_trie", "")),
                            routes[:MAX_ITEMS], off[:MAX_ITEMS])


def _split(text: str) -> dict[str, str]:
    files: dict[str, str] = {}
    for chunk in text.split("\n" + _MARK)[1:]:
        name, _, body = chunk.partition("\n")
        files[name.strip()] = body
    return files


def _dev(text: str) -> list[tuple[str, int, int]]:
    out = []
    for line in text.splitlines()[2:]:
        name, sep, counters = line.partition(":")
        values = counters.split()
        if sep and len(values) >= 9 and values[0].isdigit() and values[8].isdigit():
            out.append((name.strip()[:64], int(values[0]), int(values[8])))
    return out


def _if_inet6(text: str) -> dict[str, list[str]]:
    out: dict[str, list[str]] = {}
    for line in text.splitlines():
        parts = line.split()
        address = _hex6(parts[0]) if len(parts) == 6 else None
        if address is not None:
            out.setdefault(parts[5][:64], []).append(f"{address}/{int(parts[2], 16)}")
    return out


def _fib_addresses(text: str) -> list[str]:
    """Each `/32 host LOCAL` address, with the longest other local or link prefix that holds it."""
    local, prefixes, last = [], [], None
    for line in text.splitlines():
        stripped = line.strip()
        if stripped.startswith("|-- "):
            last = stripped[4:]
        elif stripped.startswith("/") and last is not None:
            length, _, kind = stripped[1:].partition(" ")
            if kind == "host LOCAL" and length == "32":
                local.append(last)
            elif kind in ("host LOCAL", "link UNICAST") and length.isdigit() and 0 < int(length) < 32:
                prefixes.append(ipaddress.ip_network(f"{last}/{length}", strict=False))
    out = []
    for address in dict.fromkeys(local):
        ip = ipaddress.ip_address(address)
        holding = [p.prefixlen for p in prefixes if ip in p]
        out.append(f"{address}/{max(holding) if holding else 32}")
    return out[:MAX_ITEMS]


def _routes4(text: str) -> list[Route]:
    out = []
    for line in text.splitlines()[1:]:
        parts = line.split()
        if len(parts) < 8:
            continue
        try:
            dest, gateway, flags, mask = (int(parts[i], 16) for i in (1, 2, 3, 7))
        except ValueError:
            continue
        if not flags & RTF_UP:
            continue
        prefix = bin(mask).count("1")
        out.append(Route("ipv4", f"{_ip4(dest)}/{prefix}", parts[0][:64], _ip4(gateway) if flags & RTF_GATEWAY
                         else None))
    return out


def _routes6(text: str) -> list[Route]:
    out = []
    for line in text.splitlines():
        parts = line.split()
        if len(parts) != 10:
            continue
        try:
            length, metric, flags = int(parts[1], 16), int(parts[5], 16), int(parts[8], 16)
        except ValueError:
            continue
        dest, hop = _hex6(parts[0]), _hex6(parts[4])
        if dest is None or flags & (RTF_LOCAL | RTF_CACHE) or (metric == IP6_NULL_METRIC and flags & RTF_REJECT):
            continue
        out.append(Route("ipv6", f"{dest}/{length}", parts[9][:64], hop if flags & RTF_GATEWAY else None))
    return out


def _ip4(little_endian: int) -> str:
    return socket.inet_ntoa(struct.pack("<I", little_endian))


def _hex6(text: str) -> str | None:
    try:
        return str(ipaddress.IPv6Address(bytes.fromhex(text)))
    except ValueError:
        return None
