"""The egress sink's listener (standard library only; runs as uid 10003 with no capabilities).

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

import base64
import ipaddress
import json
import os
import socket
import struct
import sys
import threading
import time

TCP_PORT = 15001
DNS_PORT = 15353
UDP_PORT = 15354
FIRST_BYTES_MAX = 4096
READ_DEADLINE_SECONDS = 2.0
IDLE_GAP_SECONDS = 0.3
MAX_CONCURRENT_CONNECTIONS = 32
MAX_EVENTS = int(os.environ.get("SINK_MAX_EVENTS", "2000"))
MAX_NAMES = 65_000
STRING_MAX = 512
SO_ORIGINAL_DST = 80
SOL_IPV6 = 41
POOL4 = int(ipaddress.IPv4Address("198.18.1.0"))
POOL6 = int(ipaddress.IPv6Address("2001:db8::1:0"))
FALLBACK4 = "198.18.0.1"
FALLBACK6 = "2001:db8::1"
TTL = 30
HTTP_METHODS = (b"GET", b"POST", b"PUT", b"DELETE", b"HEAD", b"OPTIONS", b"PATCH", b"CONNECT", b"TRACE", b"PRI")
QTYPES = {1: "A", 2: "NS", 5: "CNAME", 6: "SOA", 12: "PTR", 15: "MX", 16: "TXT", 28: "AAAA", 33: "SRV", 64: "SVCB",
          65: "HTTPS", 255: "ANY"}

_out_lock = threading.Lock()
_events = 0
_suppressed = 0


def emit(event: dict) -> None:
    global _events, _suppressed
    line = json.dumps({"ts": round(time.time(), 6), **event}, separators=(",", ":"))
    with _out_lock:
        if _events >= MAX_EVENTS:
            _suppressed += 1
            return
        _events += 1
        sys.stdout.write(line + "\n")
        if _events == MAX_EVENTS and event.get("kind") != "ready":
            sys.stdout.write(json.dumps({"ts": round(time.time(), 6), "kind": "limit", "max_events": MAX_EVENTS})
                             + "\n")
        sys.stdout.flush()


def cap(text: str | None) -> str | None:
    return None if text is None else text[:STRING_MAX]


def text(raw: bytes) -> str:
    return raw.decode("ascii", "backslashreplace")


# --- names <-> addresses -------------------------------------------------------------------------------------------

_names: dict[str, int] = {}
_by_index: list[str] = []
_names_lock = threading.Lock()


def address_for(name: str, v6: bool) -> str:
    with _names_lock:
        index = _names.get(name)
        if index is None and len(_by_index) < MAX_NAMES:
            index = _names[name] = len(_by_index)
            _by_index.append(name)
    if index is None:
        return FALLBACK6 if v6 else FALLBACK4
    return str(ipaddress.IPv6Address(POOL6 + index)) if v6 else str(ipaddress.IPv4Address(POOL4 + index))


def name_for(address: str) -> str | None:
    try:
        ip = ipaddress.ip_address(address)
    except ValueError:
        return None
    index = int(ip) - (POOL6 if ip.version == 6 else POOL4)
    with _names_lock:
        return _by_index[index] if 0 <= index < len(_by_index) else None


# --- DNS -----------------------------------------------------------------------------------------------------------

def read_name(message: bytes, offset: int) -> tuple[str, int]:
    labels: list[str] = []
    end: int | None = None
    jumps = total = 0
    while True:
        length = message[offset]
        if length == 0:
            offset += 1
            break
        if length & 0xC0 == 0xC0:
            if end is None:
                end = offset + 2
            jumps += 1
            if jumps > 16:
                raise ValueError("compression loop")
            offset = ((length & 0x3F) << 8) | message[offset + 1]
            continue
        if length & 0xC0:
            raise ValueError("bad label")
        label = message[offset + 1 : offset + 1 + length]
        if len(label) != length:
            raise ValueError("short label")
        total += length + 1
        if total > 255:
            raise ValueError("name too long")
        labels.append(text(label).replace(".", "\\."))
        offset += 1 + length
    return ".".join(labels) + ".", (end if end is not None else offset)


def dns_answer(query: bytes) -> tuple[bytes | None, dict]:
    """The response to a DNS query and what to log about it."""
    if len(query) < 12:
        return None, {"error": "short message"}
    ident, flags, qdcount = struct.unpack("!HHH", query[:6])
    if flags & 0x8000:
        return None, {"error": "not a query"}
    rd = flags & 0x0100
    opcode = (flags >> 11) & 0xF

    def reply(rcode: int, question: bytes = b"", answers: list[bytes] | None = None) -> bytes:
        answers = answers or []
        header = struct.pack("!HHHHHH", ident, 0x8000 | 0x0400 | rd | 0x0080 | (opcode << 11) | rcode,
                             1 if question else 0, len(answers), 0, 0)
        return header + question + b"".join(answers)

    if opcode != 0 or qdcount < 1:
        return reply(4), {"error": f"opcode {opcode}, {qdcount} questions"}
    try:
        name, offset = read_name(query, 12)
        qtype, qclass = struct.unpack("!HH", query[offset : offset + 4])
    except (IndexError, ValueError, struct.error) as exc:
        return reply(1), {"error": f"malformed: {exc}"}
    question = query[12 : offset + 4]
    info = {"query": cap(name.rstrip(".") or "."), "qtype": QTYPES.get(qtype, str(qtype))}
    if qclass != 1:
        return reply(0, question), info
    answers = []
    if qtype in (1, 28):
        key = name.rstrip(".").lower()
        address = address_for(key, qtype == 28)
        rdata = socket.inet_pton(socket.AF_INET6 if qtype == 28 else socket.AF_INET, address)
        answers.append(struct.pack("!HHHIH", 0xC00C, qtype, 1, TTL, len(rdata)) + rdata)
        info["answer"] = address
    return reply(0, question, answers), info


def serve_dns(sock: socket.socket) -> None:
    while True:
        try:
            data, peer = sock.recvfrom(4096)
        except OSError:
            continue
        response, info = dns_answer(data)
        if response is not None:
            try:
                sock.sendto(response, peer)
            except OSError:
                pass
        if "query" in info:
            emit({"kind": "dns", "transport": "udp", "host": info["query"], "port": 53, **info})
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

def first_bytes(data: bytes) -> dict:
    return {"bytes": len(data[:FIRST_BYTES_MAX]), "truncated": len(data) > FIRST_BYTES_MAX,
            "first_bytes": base64.b64encode(data[:FIRST_BYTES_MAX]).decode()}


def original_dst(conn: socket.socket, family: int) -> tuple[str, int] | None:
    try:
        if family == socket.AF_INET6:
            raw = conn.getsockopt(SOL_IPV6, SO_ORIGINAL_DST, 28)
            return socket.inet_ntop(socket.AF_INET6, raw[8:24]), struct.unpack("!H", raw[2:4])[0]
        raw = conn.getsockopt(socket.SOL_IP, SO_ORIGINAL_DST, 16)
        return socket.inet_ntoa(raw[4:8]), struct.unpack("!H", raw[2:4])[0]
    except OSError:
        return None


def tls_record_complete(data: bytes) -> bool:
    return len(data) >= 5 and len(data) >= 5 + struct.unpack("!H", data[3:5])[0]


def http_complete(data: bytes) -> bool:
    head, sep, body = data.partition(b"\r\n\r\n")
    if not sep:
        return False
    for line in head.split(b"\r\n")[1:]:
        name, _, value = line.partition(b":")
        if name.strip().lower() == b"content-length":
            try:
                return len(body) >= int(value.strip())
            except ValueError:
                return True
        if name.strip().lower() == b"transfer-encoding":
            return body.endswith(b"0\r\n\r\n")
    return True


def read_first(conn: socket.socket) -> bytes:
    """Read what the client sends first: until a full TLS record / HTTP request, 4 KiB, EOF, a pause or the deadline."""
    data = b""
    deadline = time.monotonic() + READ_DEADLINE_SECONDS
    while len(data) < FIRST_BYTES_MAX + 1:
        remaining = deadline - time.monotonic()
        if remaining <= 0:
            break
        conn.settimeout(min(remaining, IDLE_GAP_SECONDS) if data else remaining)
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


def parse_tls(data: bytes) -> dict:
    out: dict = {"protocol": "tls"}
    try:
        body = data[5 : 5 + struct.unpack("!H", data[3:5])[0]]
        if body[0] != 1:
            return out
        p = 4 + 2 + 32
        p += 1 + body[p]
        p += 2 + struct.unpack("!H", body[p : p + 2])[0]
        p += 1 + body[p]
        end = min(len(body), p + 2 + struct.unpack("!H", body[p : p + 2])[0])
        p += 2
        while p + 4 <= end:
            ext_type, ext_len = struct.unpack("!HH", body[p : p + 4])
            ext = body[p + 4 : p + 4 + ext_len]
            p += 4 + ext_len
            if ext_type == 0:
                q = 2
                while q + 3 <= len(ext):
                    name_type, name_len = ext[q], struct.unpack("!H", ext[q + 1 : q + 3])[0]
                    if name_type == 0:
                        out["sni"] = cap(text(ext[q + 3 : q + 3 + name_len]))
                    q += 3 + name_len
            elif ext_type == 16:
                protocols, q = [], 2
                while q < len(ext) and len(protocols) < 8:
                    protocols.append(cap(text(ext[q + 1 : q + 1 + ext[q]])))
                    q += 1 + ext[q]
                out["alpn"] = protocols
    except (IndexError, struct.error):
        out["note"] = "truncated or malformed ClientHello"
    return out


def parse_http(data: bytes) -> dict:
    head = data.split(b"\r\n\r\n", 1)[0]
    lines = head.split(b"\r\n")
    parts = lines[0].split(b" ")
    out: dict = {"protocol": "http", "method": cap(text(parts[0])), "path": cap(text(parts[1])) if len(parts) > 1
                 else None}
    for line in lines[1:]:
        name, _, value = line.partition(b":")
        if name.strip().lower() == b"host":
            out["http_host"] = cap(text(value.strip()))
            break
    return out


def describe(data: bytes) -> dict:
    if not data:
        return {"protocol": "none"}
    if data[:1] == b"\x16" and data[1:2] == b"\x03":
        return parse_tls(data)
    if data.split(b" ", 1)[0] in HTTP_METHODS:
        return parse_http(data)
    return {"protocol": "unknown"}


def dns_over_tcp(conn: socket.socket) -> dict | None:
    data = read_first(conn)
    if len(data) < 2 or len(data) < 2 + struct.unpack("!H", data[:2])[0]:
        return None
    response, info = dns_answer(data[2 : 2 + struct.unpack("!H", data[:2])[0]])
    if response is not None:
        try:
            conn.sendall(struct.pack("!H", len(response)) + response)
        except OSError:
            pass
    return info if "query" in info else None


def handle(conn: socket.socket, family: int, accepted: float, slots: threading.BoundedSemaphore) -> None:
    try:
        dst = original_dst(conn, family)
        if dst is None:  # not redirected: a direct connection to the listener itself
            local = conn.getsockname()
            dst = (local[0], local[1])
        ip, port = dst
        where = f"[{ip}]:{port}" if ":" in ip else f"{ip}:{port}"
        resolved = name_for(ip)
        if port == 53:
            info = dns_over_tcp(conn)
            if info is not None:
                emit({"ts": accepted, "kind": "dns", "transport": "tcp", "host": info["query"], "port": 53,
                      "original_dst": where, **info})
                return
        data = read_first(conn)
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
