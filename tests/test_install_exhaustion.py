"""A hostile install cannot exhaust the scanner's host: what it makes the proxy log is read and kept only up to a
bound (the rest is one refused attempt that says so), and what it writes to the engine's disk is stopped at a bound.

The docker test floods a real install proxy with DNS lookups of `.invalid` names from a container on its network,
with the bound lowered so that a few thousand lookups pass it.
"""

from __future__ import annotations

import json
import uuid

import pytest

from sandbox.core import images
from sandbox.core.errors import SandboxError
from sandbox.install import container as install, disk
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


# ------------------------------------------------------------------------------------------ the engine's disk


def test_statfs_output_is_read_as_free_bytes_and_files():
    assert disk.parse_statfs(b"100 4096 7\n") == disk.DiskFree(bytes=409_600, files=7)
    with pytest.raises(SandboxError):
        disk.parse_statfs(b"stat: cannot read file system information for '/'\n")


def test_the_disk_watch_stops_past_either_bound():
    free = iter([(10_000, 500), (9_000, 450), (7_000, 450), (9_500, 300)])

    def run(command):  # noqa: ANN001, ANN202
        assert command == disk.STATFS_COMMAND
        blocks, files = next(free)
        return f"{blocks} 1024 {files}".encode(), b""

    watch = disk.DiskWatch(run, max_bytes=2_000 * 1024, max_files=100)
    watch.start()
    watch.check()  # 1,000 KiB and 50 files taken: within both
    with pytest.raises(disk.DiskLimitReached, match="past its bound"):
        watch.check()  # 3,000 KiB
    with pytest.raises(disk.DiskLimitReached, match="200 files"):
        watch.check()  # 200 files


@pytest.mark.docker
def test_an_install_that_fills_the_disk_is_stopped_at_its_bound(docker_client, tmp_path, no_leftovers):
    # 1 GiB in 64 MiB files (the install's bound lowered to 128 MiB; the check comes every 2 s and after the steps).
    package = tmp_path / "fill"
    package.mkdir()
    (package / "package.json").write_text(json.dumps({
        "name": "mcp-zoo-disk-fill", "version": "0.1.0",
        "scripts": {"postinstall": "i=0; while [ $i -lt 16 ]; do dd if=/dev/zero of=/opt/server/fill.$i bs=1M "
                                   "count=64 status=none; sleep 0.3; i=$((i+1)); done"}}))
    runtime = images.ensure_runtime_image(docker_client, "node")
    request = install.InstallRequest("npm", "/opt/src/pkg", "mcp-zoo-disk-fill", f"test:{uuid.uuid4()}",
                                     local_path=package, disk_limit_bytes=128 * 1024**2)
    before = {image.id for image in docker_client.images.list()}
    with SandboxSession(docker_client) as session:
        with pytest.raises(SandboxError, match="past its bound of 0.1 GiB") as raised:
            install.install(session, request, runtime.tag, runtime.image_id, use_cache=False)
    assert "\n" not in str(raised.value)
    assert session.teardown_result is not None and session.teardown_result.complete
    assert {image.id for image in docker_client.images.list()} == before  # nothing was committed


@pytest.mark.docker
def test_the_disk_look_runs_as_the_container_s_own_user_not_as_top_names_it(docker_client):
    """The look at the disk runs as the idle processes' user. `top` names that user as the engine's kernel sees it:
    under a user-namespace remap a host uid (10002 + the remap's base), which is not mapped inside the container, so
    an exec as that number could not start and every install would stop for an unreadable disk. The look runs as the
    container's own user (10002 inside), whatever number `top` shows (here set to what a remap would show)."""
    import time

    from sandbox.core.hardening import hardened_host_config
    from sandbox.install.steps import StepRunner

    runtime = images.ensure_runtime_image(docker_client, "node").tag
    with SandboxSession(docker_client) as session:
        host_config = hardened_host_config(docker_client.api, memory_bytes=256 * 1024**2, nano_cpus=1_000_000_000,
                                           pids_limit=64, network_mode="none")
        container_id = session.create_container("install", image=runtime, command=install.IDLE_COMMAND,
                                                user="10002:10002", working_dir="/opt/server",
                                                host_config=host_config)
        runner = StepRunner(docker_client.api, container_id, user=f"{install.INSTALL_UID}:{install.INSTALL_UID}",
                            environment={}, deadline=time.monotonic() + 60, home_root=install.INSTALL_HOME,
                            disk_bounds=(disk.DEFAULT_MAX_BYTES, disk.DEFAULT_MAX_FILES))
        runner.start()
        assert runner._idle_users == frozenset({"10002"})
        runner._idle_users = frozenset({str(165536 + 10002)})  # `top` under a remap with the usual base
        assert runner.disk is not None  # the look as DiskWatch runs it
        assert runner.disk.run(["sh", "-c", "id -u; id -g"]) == (b"10002\n10002\n", b"")
