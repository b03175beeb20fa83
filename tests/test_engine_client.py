"""The engine client reads no proxy or netrc settings for a local socket (they cannot apply to it), and still does
over TCP; without Docker: a small HTTP server stands in for the engine."""

from __future__ import annotations

import socketserver
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from http.server import BaseHTTPRequestHandler
from pathlib import Path

import docker
import pytest
import requests.sessions

from sandbox.core.engine import bound, not_over_tcp


class _Ping(BaseHTTPRequestHandler):
    def do_GET(self) -> None:  # noqa: N802 - the http.server hook's name
        self.send_response(200)
        self.send_header("Content-Type", "text/plain")
        self.send_header("Content-Length", "2")
        self.end_headers()
        self.wfile.write(b"OK")

    def log_message(self, *args: object) -> None:
        pass


class _UnixEngine(socketserver.ThreadingMixIn, socketserver.UnixStreamServer):
    daemon_threads = True

    def get_request(self):  # a unix peer has no address; BaseHTTPRequestHandler wants a (host, port)
        conn, _ = self.socket.accept()
        return conn, ("local", 0)


class _TcpEngine(socketserver.ThreadingMixIn, socketserver.TCPServer):
    daemon_threads = True


@contextmanager
def _serving(server: socketserver.BaseServer) -> Iterator[None]:
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield
    finally:
        server.shutdown()
        server.server_close()


@pytest.fixture
def environment_reads(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """Every URL `requests` looked up the environment's proxies for."""
    seen: list[str] = []
    original = requests.sessions.get_environ_proxies

    def recorded(url: str, no_proxy: str | None = None) -> dict[str, str]:
        seen.append(url)
        return original(url, no_proxy=no_proxy)

    monkeypatch.setattr(requests.sessions, "get_environ_proxies", recorded)
    monkeypatch.setenv("NO_PROXY", "*")  # the TCP near miss must reach its loopback server, whatever the machine sets
    return seen


def test_a_local_socket_engine_is_asked_without_reading_the_environment(tmp_path: Path,
                                                                        environment_reads: list[str]) -> None:
    path = tmp_path / "engine.sock"
    with _serving(_UnixEngine(str(path), _Ping)):
        client = bound(docker.DockerClient(base_url=f"unix://{path}", version="1.41", timeout=5))
        try:
            assert client.ping() is True
            assert client.ping() is True
        finally:
            client.close()
    assert client.api.trust_env is False
    assert environment_reads == []


def test_near_miss_an_engine_over_tcp_still_honours_the_environment(environment_reads: list[str]) -> None:
    with _serving(server := _TcpEngine(("127.0.0.1", 0), _Ping)):
        port = server.server_address[1]
        client = bound(docker.DockerClient(base_url=f"tcp://127.0.0.1:{port}", version="1.41", timeout=5))
        try:
            assert client.ping() is True
        finally:
            client.close()
    assert client.api.trust_env is True
    assert environment_reads == [f"http://127.0.0.1:{port}/v1.41/_ping"]


def test_which_transports_are_not_over_tcp() -> None:
    assert not_over_tcp("http+docker://localhost")  # unix socket
    assert not_over_tcp("http+docker://localnpipe")  # Windows named pipe
    assert not_over_tcp("http+docker://ssh")  # ssh://
    assert not not_over_tcp("http://127.0.0.1:2375")
    assert not not_over_tcp("https://engine.example.invalid:2376")
