"""The egress sink's listener (standard library only; runs as uid 10003 with no capabilities): the sockets, the
threads and the log. What the bytes mean (DNS, TLS, HTTP) is read by sink_wire.py beside it.

setup.sh has redirected, in the network namespace the MCP server shares with this process, every outbound TCP
connection to port 15001, UDP to port 53 to 15353 and any other UDP to 15354. This answers each one locally and writes
one JSON line per event to stdout:

- dns: the query name and type; A/AAAA are answered with an address from 198.18.0.0/15 / 2001:db8::/96 that is
  unique to the name, so a later connection to that address names the host even when the protocol carries no name.
- tcp: the original destination (SO_ORIGINAL_DST), the name it was resolved from, TLS SNI/ALPN or HTTP method, path
  and Host, and the first bytes (base64, at most 4 KiB); the connection is then closed.
- udp: the payload of a non-DNS datagram (the original destination of redirected UDP cannot be recovered).

Everything is bounded: concurrent connections, bytes read per connection and its time, length of logged strings,
number of distinct names, and the number of events logged (then one "limit" line, and answering goes on silently).
"""

from __future__ import annotations

import json
import os
import socket
import struct
import sys
import threading
import time

# `python3 -I` (setup.sh) leaves the script's own folder off sys.path; its sibling module lives there.
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from sink_wire import (  # noqa: E402 - after the path it is found on
    FIRST_BYTES_MAX,
    HTTP_METHODS,
    cap,
    describe,
    dns_answer,
    first_bytes,
    http_complete,
    more_to_come,
    name_for,
    tls_record_complete,
)

TCP_PORT = 15001
DNS_PORT = 15353
UDP_PORT = 15354
READ_DEADLINE_SECONDS = 2.0
IDLE_GAP_SECONDS = 0.3
MAX_CONCURRENT_CONNECTIONS = 32
MAX_EVENTS = int(os.environ.get("SINK_MAX_EVENTS", "2000"))
# The engine's json-file log splits a message past 16 KiB, stamping each piece: a line must stay well under that. The
# JSON is ASCII, so a control or non-ASCII character of a logged string takes six bytes.
MAX_LINE_BYTES = 12_000
# The engine's json-file log (20 MB, one file) rotates past its size and drops what came before: a read after that
# sees the log from the rotation on, and the first attempts (the exfiltration itself) are gone with no sign. It
# stores each line JSON-escaped again, `"` and `\` two bytes, `<`, `>` and `&` six (\u003c), so 1,300 lines of
# ClientHellos with names of `<` rotated it before the event cap. The sink stops logging (a `limit` line, as at
# MAX_EVENTS) before the lines would take more than LOG_BUDGET_BYTES of the engine's file.
LOG_BUDGET_BYTES = 16 * 1024 * 1024
ENGINE_ENTRY_BYTES = 96  # {"log":"…\n","stream":"stdout","time":"<RFC 3339, ns>"} and its newline
SHORT_STRING = 128
KEPT_WHEN_CUT = ("ts", "kind", "port", "original_dst", "transport", "protocol", "bytes", "truncated", "first_bytes")
SO_ORIGINAL_DST = 80
SOL_IPV6 = 41

_out_lock = threading.Lock()
_events = 0
_suppressed = 0
_engine_bytes = 0
_stopped = False


def _short(value: object) -> object:
    if isinstance(value, str):
        return value[:SHORT_STRING]
    if isinstance(value, list):
        return [item[:SHORT_STRING // 2] if isinstance(item, str) else item for item in value[:4]]
    return value


def log_line(event: dict) -> str:
    """The event as one JSON line under MAX_LINE_BYTES: as it is, else with its strings shortened, else only what
    places it and its first bytes (base64 of at most 4 KiB, what the canary search reads); `cut` says so."""
    line = json.dumps(event, separators=(",", ":"))
    if len(line) <= MAX_LINE_BYTES:
        return line
    short = {key: value if key == "first_bytes" else _short(value) for key, value in event.items()}
    line = json.dumps({**short, "cut": True}, separators=(",", ":"))
    if len(line) <= MAX_LINE_BYTES:
        return line
    return json.dumps({**{key: event[key] for key in KEPT_WHEN_CUT if key in event}, "cut": True},
                      separators=(",", ":"))


def engine_bytes(line: str) -> int:
    """What the engine's json-file log stores for one line (ASCII JSON) written to stdout."""
    return (len(line) + line.count('"') + line.count("\\") + 5 * sum(line.count(c) for c in "<>&")
            + ENGINE_ENTRY_BYTES)


def _limit_line(reason: str) -> str:
    return json.dumps({"ts": round(time.time(), 6), "kind": "limit", "max_events": MAX_EVENTS, "events": _events,
                       "reason": reason}) + "\n"


def emit(event: dict) -> None:
    global _events, _suppressed, _engine_bytes, _stopped
    line = log_line({"ts": round(time.time(), 6), **event})
    with _out_lock:
        if _stopped:
            _suppressed += 1
            return
        if _engine_bytes + engine_bytes(line) > LOG_BUDGET_BYTES:
            _stopped, _suppressed = True, _suppressed + 1
            sys.stdout.write(_limit_line("log size"))
            sys.stdout.flush()
            return
        _events += 1
        _engine_bytes += engine_bytes(line)
        sys.stdout.write(line + "\n")
        if _events >= MAX_EVENTS:
            _stopped = True
            if event.get("kind") != "ready":
                sys.stdout.write(_limit_line("event count"))
        sys.stdout.flush()


def serve_dns(sock: socket.socket) -> None:
    while True:
        try:
            data, peer = sock.recvfrom(FIRST_BYTES_MAX + 1)
        except OSError:
            continue
        response, info = dns_answer(data)
        if response is not None:
            try:
                sock.sendto(response, peer)
            except OSError:
                pass
        if "query" in info:  # with the message's bytes: what follows the question is searched for canaries too
            emit({"kind": "dns", "transport": "udp", "host": info["query"], "port": 53, **info, **first_bytes(data)})
        else:
            emit({"kind": "udp", "port": 53, "note": info.get("error"), **first_bytes(data)})


def serve_udp(sock: socket.socket) -> None:
    while True:
        try:
            data, _peer = sock.recvfrom(FIRST_BYTES_MAX + 1)
        except OSError:
            continue
        emit({"kind": "udp", "port": None, "original_dst": None, **first_bytes(data)})


# --- TCP -----------------------------------------------------------------------------------------------------------

def original_dst(conn: socket.socket, family: int) -> tuple[str, int] | None:
    try:
        if family == socket.AF_INET6:
            raw = conn.getsockopt(SOL_IPV6, SO_ORIGINAL_DST, 28)
            return socket.inet_ntop(socket.AF_INET6, raw[8:24]), struct.unpack("!H", raw[2:4])[0]
        raw = conn.getsockopt(socket.SOL_IP, SO_ORIGINAL_DST, 16)
        return socket.inet_ntoa(raw[4:8]), struct.unpack("!H", raw[2:4])[0]
    except OSError:
        return None


def read_first(conn: socket.socket) -> bytes:
    """Read what the client sends first: until a full TLS record / HTTP request, 4 KiB, EOF, a pause or the deadline."""
    data = b""
    deadline = time.monotonic() + READ_DEADLINE_SECONDS
    while len(data) < FIRST_BYTES_MAX + 1:
        remaining = deadline - time.monotonic()
        if remaining <= 0:
            break
        # The idle gap ends a read only when the client's own framing does not say more is coming (more_to_come).
        conn.settimeout(min(remaining, IDLE_GAP_SECONDS) if data and not more_to_come(data) else remaining)
        try:
            chunk = conn.recv(FIRST_BYTES_MAX + 1 - len(data))
        except OSError:  # TimeoutError included
            break
        if not chunk:
            break
        data += chunk
        if data[:1] == b"\x16" and tls_record_complete(data):
            break
        if data.split(b" ", 1)[0] in HTTP_METHODS and http_complete(data):
            break
    return data


def dns_over_tcp(conn: socket.socket, data: bytes) -> tuple[list[dict], bool]:
    """Each query of the length-prefixed DNS messages in `data`, answered in turn, with its message's bytes (a tail
    after the question is searched for canaries too; DNS over TCP may carry several queries, each is logged), and
    whether that was all of `data`: else the connection is logged as TCP as well, with every byte read (what is no
    DNS, an HTTP request to port 53 for one, must not be dropped)."""
    queries, rest = [], data
    while len(rest) >= 2 and len(rest) >= 2 + (size := struct.unpack("!H", rest[:2])[0]):
        message, rest = rest[2 : 2 + size], rest[2 + size :]
        response, info = dns_answer(message)
        if response is not None:
            try:
                conn.sendall(struct.pack("!H", len(response)) + response)
            except OSError:
                pass
        if "query" not in info:
            return queries, False
        queries.append({**info, **first_bytes(message)})
    return queries, not rest


def handle(conn: socket.socket, family: int, accepted: float, slots: threading.BoundedSemaphore) -> None:
    try:
        dst = original_dst(conn, family)
        if dst is None:  # not redirected: a direct connection to the listener itself
            local = conn.getsockname()
            dst = (local[0], local[1])
        ip, port = dst
        where = f"[{ip}]:{port}" if ":" in ip else f"{ip}:{port}"
        resolved = name_for(ip)
        data = read_first(conn)  # once: bytes the DNS reading took are logged below when they were no DNS
        if port == 53:
            queries, whole = dns_over_tcp(conn, data)
            for info in queries:
                emit({"ts": accepted, "kind": "dns", "transport": "tcp", "host": info["query"], "port": 53,
                      "original_dst": where, **info})
            if queries and whole:
                return
        detail = describe(data)
        host = detail.get("sni") or detail.get("http_host") or resolved
        emit({"ts": accepted, "kind": "tcp", "host": host, "resolved_name": resolved, "port": port,
              "original_dst": where, **detail, **first_bytes(data)})
    except Exception as exc:  # noqa: BLE001 - one bad connection must never stop the sink
        emit({"ts": accepted, "kind": "tcp", "note": cap(f"sink error: {exc!r}")})
    finally:
        try:
            conn.close()
        finally:
            slots.release()


def serve_tcp(listener: socket.socket, family: int, slots: threading.BoundedSemaphore) -> None:
    while True:
        try:
            conn, _peer = listener.accept()
        except OSError:
            continue
        accepted = round(time.time(), 6)
        if not slots.acquire(blocking=False):
            dst = original_dst(conn, family)
            conn.close()
            emit({"ts": accepted, "kind": "tcp", "port": dst[1] if dst else None,
                  "original_dst": f"{dst[0]}:{dst[1]}" if dst else None, "resolved_name": name_for(dst[0]) if dst
                  else None, "host": name_for(dst[0]) if dst else None, "protocol": "none",
                  "note": f"over {MAX_CONCURRENT_CONNECTIONS} concurrent connections: closed unread"})
            continue
        threading.Thread(target=handle, args=(conn, family, accepted, slots), daemon=True).start()


# --- start ---------------------------------------------------------------------------------------------------------

def bind(family: int, kind: int, address: str, port: int) -> socket.socket:
    sock = socket.socket(family, kind)
    # Not for UDP: the server shares this namespace, and a UDP port bound with SO_REUSEADDR can be bound again by any
    # uid that sets it too, which then takes the datagrams (DNS included) the sink should log. A listening TCP port
    # cannot be shared so.
    if kind == socket.SOCK_STREAM:
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    if family == socket.AF_INET6:
        sock.setsockopt(socket.IPPROTO_IPV6, socket.IPV6_V6ONLY, 1)
    sock.bind((address, port))
    if kind == socket.SOCK_STREAM:
        sock.listen(64)
    return sock


def status_fields() -> dict:
    wanted = {"CapInh", "CapPrm", "CapEff", "CapBnd", "CapAmb", "NoNewPrivs"}
    out = {}
    with open("/proc/self/status") as handle_:
        for line in handle_:
            name, _, value = line.partition(":")
            if name in wanted:
                out[name] = value.strip()
    return out


def ipv6_enabled() -> bool:
    try:
        with open("/proc/net/if_inet6") as addresses:
            return bool(addresses.read().strip())
    except OSError:
        return False


def main() -> None:
    # The DNS sockets must be bound to the loopback addresses: replies to redirected UDP are only un-NATed when
    # they leave from the address the redirect delivered to.
    families = [(socket.AF_INET, "127.0.0.1")]
    if ipv6_enabled():
        families.append((socket.AF_INET6, "::1"))
    slots = threading.BoundedSemaphore(MAX_CONCURRENT_CONNECTIONS)
    threads = []
    for family, address in families:
        threads.append(threading.Thread(target=serve_dns, args=(bind(family, socket.SOCK_DGRAM, address, DNS_PORT),)))
        threads.append(threading.Thread(target=serve_udp, args=(bind(family, socket.SOCK_DGRAM, address, UDP_PORT),)))
        threads.append(threading.Thread(target=serve_tcp, args=(bind(family, socket.SOCK_STREAM, address, TCP_PORT),
                                                                family, slots)))
    for thread in threads:
        thread.daemon = True
        thread.start()
    emit({"kind": "ready", "uid": os.getuid(), "gid": os.getgid(), "groups": os.getgroups(),
          "ipv6": len(families) == 2, **status_fields()})
    threading.Event().wait()


if __name__ == "__main__":
    main()
