"""A hostile install cannot exhaust the scanner's host: what it makes the proxy log is read and kept only up to a
bound (the rest is one refused attempt that says so).

The docker test floods a real install proxy with DNS lookups of `.invalid` names from a container on its network,
with the bound lowered so that a few thousand lookups pass it.
"""

from __future__ import annotations

import pytest

from sandbox.core import images
from sandbox.core.session import SandboxSession
from sandbox.install.proxy import container as ie
from sandbox.install.proxy import log as proxy_log
from tests.sandbox_helpers import run_on_install_network

MARKER = "0f3c9a7e5b1d4c2a8e6f0b9d7c5a3e1f"

# 3,000 lookups of new names (each ~120 bytes of the engine's log with its timestamp), the way a flood would send them.
DNS_FLOOD = r"""node -e '
const dgram = require("dgram"); const fs = require("fs");
const ns = fs.readFileSync("/etc/resolv.conf", "utf8").match(/nameserver\s+(\S+)/)[1];
const s = dgram.createSocket("udp4"); let n = 0;
function q(name) {
  const parts = [Buffer.from([0x12, 0x34, 1, 0, 0, 1, 0, 0, 0, 0, 0, 0])];
  for (const l of name.split(".")) { parts.push(Buffer.from([l.length]), Buffer.from(l)); }
  parts.push(Buffer.from([0, 0, 1, 0, 1])); return Buffer.concat(parts);
}
function burst() {
  if (n >= 3000) { setTimeout(() => { console.log("SENT", n); s.close(); }, 500); return; }
  for (let i = 0; i < 100; i++) s.send(q("x" + (n++) + ".flood.invalid"), 53, ns);
  setTimeout(burst, 5);
}
burst();'"""


@pytest.fixture
def npm_runtime(docker_client):
    return images.ensure_runtime_image(docker_client, "node").tag


def test_attempts_past_the_bound_are_counted_in_one_that_says_so():
    dns_log = "\n".join(f"dnsmasq[9]: query[A] x{i}.flood.invalid from 172.18.0.3"
                        for i in range(proxy_log.MAX_ATTEMPTS + 100))
    attempts = proxy_log.parse_attempts("", ["registry.npmjs.org"], marker=MARKER, dns_log=dns_log)
    assert len(attempts) == proxy_log.MAX_ATTEMPTS + 1
    overflow = attempts[-1]
    assert (overflow.host, overflow.via, overflow.allowed, overflow.count) == (
        proxy_log.OVERFLOW_HOST, "dns", False, 100)
    assert sum(a.count for a in attempts) == proxy_log.MAX_ATTEMPTS + 100  # every lookup is still counted


class _FakeLogs:
    def __init__(self, frames: list[bytes]) -> None:
        self.frames, self.taken, self.closed = frames, 0, False

    def logs(self, container_id, **kwargs):  # noqa: ANN001, ANN003
        assert kwargs["stream"] is True and kwargs["timestamps"] is True
        return self

    def __iter__(self):  # noqa: ANN204
        for frame in self.frames:
            self.taken += 1
            yield frame

    def close(self) -> None:
        self.closed = True


def test_the_proxy_log_is_read_up_to_its_bound_in_whole_lines():
    fake = _FakeLogs([b"line %05d\n" % i for i in range(10_000)])
    text, cut = ie.bounded_log(fake, "c", stdout=False, max_bytes=100)
    assert cut and text.splitlines() == [f"line {i:05d}" for i in range(9)]
    assert fake.taken == 10 and fake.closed  # the rest was never read
    text, cut = ie.bounded_log(_FakeLogs([b"a\n", b"b\n"]), "c", stdout=True, max_bytes=100)
    assert (text, cut) == ("a\nb\n", False)


@pytest.mark.docker
def test_a_dns_flood_is_read_only_up_to_the_bound_and_said(docker_client, npm_runtime, no_leftovers, monkeypatch):
    monkeypatch.setattr(ie, "MAX_LOG_BYTES", 64 * 1024)
    with SandboxSession(docker_client) as session:
        proxy = ie.start_install_proxy(session, ["registry.npmjs.org"])
        code, output, _ = run_on_install_network(session, proxy, npm_runtime, DNS_FLOOD)
        assert code == 0 and "SENT 3000" in output, output
        attempts = proxy.attempts()
    dns = [a for a in attempts if a.via == "dns"]
    assert 200 < len(dns) < 1_000  # ~64 KiB of lines, not 3,000 names
    cut = proxy_log.log_cut_attempt("dns", 64 * 1024)
    assert cut in attempts and not cut.allowed
    assert "past the first 65,536 bytes of the install proxy's log" in cut.host
