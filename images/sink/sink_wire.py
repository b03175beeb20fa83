"""The egress sink's reading of what a sandboxed process sent, as data (standard library only; copied into the sink
image beside listener.py, which serves the sockets): DNS messages and the name <-> address pool the answers come
from, and the first bytes of a TCP connection (TLS ClientHello SNI/ALPN, HTTP request line and Host). Every string
logged is capped."""

from __future__ import annotations

import base64
import ipaddress
import socket
import struct
import threading

FIRST_BYTES_MAX = 4096
MAX_NAMES = 65_000
STRING_MAX = 512
POOL4 = int(ipaddress.IPv4Address("198.18.1.0"))
POOL6 = int(ipaddress.IPv6Address("2001:db8::1:0"))
FALLBACK4 = "198.18.0.1"
FALLBACK6 = "2001:db8::1"
TTL = 30
HTTP_METHODS = (b"GET", b"POST", b"PUT", b"DELETE", b"HEAD", b"OPTIONS", b"PATCH", b"CONNECT", b"TRACE", b"PRI")
QTYPES = {1: "A", 2: "NS", 5: "CNAME", 6: "SOA", 12: "PTR", 15: "MX", 16: "TXT", 28: "AAAA", 33: "SRV", 64: "SVCB",
          65: "HTTPS", 255: "ANY"}


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


# --- first bytes ------------------------------------------------------------------------------------------------------

def first_bytes(data: bytes) -> dict:
    return {"bytes": len(data[:FIRST_BYTES_MAX]), "truncated": len(data) > FIRST_BYTES_MAX,
            "first_bytes": base64.b64encode(data[:FIRST_BYTES_MAX]).decode()}


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


def more_to_come(data: bytes) -> bool:
    """Whether the client's own framing says its first message is not all here yet: a TLS record shorter than its
    length, an HTTP request whose headers or body (Content-Length, chunked) have not all come. Such a connection is
    read until the deadline rather than cut at the idle gap: a client waiting for a `100 Continue` the sink never
    sends (curl waits 1 s) sends its body only after the pause, and the body is what carries a secret."""
    if data[:1] == b"\x16":
        return not tls_record_complete(data)
    return data.split(b" ", 1)[0] in HTTP_METHODS and not http_complete(data)


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
