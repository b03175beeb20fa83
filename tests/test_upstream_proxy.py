"""Chaining the install proxy to a user's upstream (corporate) proxy: --upstream-proxy / HTTPS_PROXY, NO_PROXY, and
credentials that never show.

Unit tests cover parsing, masking, NO_PROXY matching and the config rendering (images/proxy/render-config.sh, run with
the host's sh and sed). The docker tests use the real engine: a second squid from the project's proxy image plays the
corporate upstream on the default bridge, logging every request with its Proxy-Authorization header; the only hosts
tried are the npm registry (allowed, through the upstream) and names under `.invalid` (refused by our proxy).
"""

from __future__ import annotations

import ipaddress
import base64
import dataclasses
import json
import os
import socket
import subprocess
import time
from urllib.parse import quote

import pytest

from sandbox.core import images, labels
from sandbox.install.proxy import container as ie
from sandbox.install.proxy import allowlist as proxy_allowlist
from sandbox.install.proxy import log as proxy_log
from sandbox.install.proxy import reachability
from sandbox.install.proxy import upstream as up
from sandbox.core.errors import SandboxError, UserInputError
from sandbox.install.request import InstallRequest
from sandbox.core.hardening import hardened_host_config
from sandbox.core.session import SandboxSession
from scanner.cli import options as cli_upstream
from scanner.pipeline.scan import ScanOptions
from tests.sandbox_helpers import PHONE_HOME, REPO, labelled_containers, run_cli, run_on_install_network

PROXY_DIR = REPO / "images" / "proxy"
USER = "mcp-test-user"
PASSWORD = "s3cr3t p@ss:w%rd/x#"  # every character a URL or squid.conf could trip on
URL_WITH_LOGIN = f"http://{USER}:{quote(PASSWORD, safe='')}@proxy.corp.invalid:3128"


# ----------------------------------------------------------------------------------------------------- parsing (unit)

@pytest.mark.parametrize(("text", "host", "port", "container_host", "redacted"), [
    ("http://proxy.corp.invalid:3128", "proxy.corp.invalid", 3128, "proxy.corp.invalid",
     "http://proxy.corp.invalid:3128"),
    ("proxy.corp.invalid:8080/", "proxy.corp.invalid", 8080, "proxy.corp.invalid", "http://proxy.corp.invalid:8080"),
    ("HTTP://Proxy.Corp.Invalid.:80", "proxy.corp.invalid", 80, "proxy.corp.invalid", "http://proxy.corp.invalid:80"),
    ("http://172.17.0.9:3128", "172.17.0.9", 3128, "172.17.0.9", "http://172.17.0.9:3128"),
    ("http://127.0.0.1:3128", "127.0.0.1", 3128, up.HOST_GATEWAY_NAME, "http://127.0.0.1:3128"),
    ("http://127.1.2.3:3128", "127.1.2.3", 3128, up.HOST_GATEWAY_NAME, "http://127.1.2.3:3128"),
    ("http://localhost:3128", "localhost", 3128, up.HOST_GATEWAY_NAME, "http://localhost:3128"),
    ("http://[::1]:3128", "::1", 3128, up.HOST_GATEWAY_NAME, "http://[::1]:3128"),
    (URL_WITH_LOGIN, "proxy.corp.invalid", 3128, "proxy.corp.invalid", "http://***@proxy.corp.invalid:3128"),
])
def test_good_upstream_urls(text, host, port, container_host, redacted):
    proxy = up.parse_upstream_proxy(text)
    assert (proxy.host, proxy.port, proxy.container_host, proxy.redacted) == (host, port, container_host, redacted)
    assert proxy.loopback == (container_host == up.HOST_GATEWAY_NAME)


def test_credentials_are_decoded_and_re_encoded_for_squid():
    proxy = up.parse_upstream_proxy(URL_WITH_LOGIN)
    assert proxy.credentials == up.Credentials(USER, PASSWORD)
    # Only unreserved characters, % and the one ':' reach squid's `login=`, which unescapes them.
    assert proxy.credentials.squid_login() == "mcp-test-user:s3cr3t%20p%40ss%3Aw%25rd%2Fx%23"
    # A password with unencoded '@', '/', '#': everything before the last '@' is the userinfo.
    raw = up.parse_upstream_proxy("http://u:p@ss/w#rd@proxy.corp.invalid:1")
    assert raw.credentials == up.Credentials("u", "p@ss/w#rd") and raw.host == "proxy.corp.invalid"


@pytest.mark.parametrize(("text", "expected"), [
    ("", "is empty"),
    ("https://bob:hunter22@proxy.corp.invalid:3128", "https:// is not supported"),
    ("socks5://bob:hunter22@proxy.corp.invalid:1080", "socks5:// is not supported"),
    ("http://bob:hunter22@proxy.corp.invalid", "has no port"),
    ("http://bob:hunter22@proxy.corp.invalid:0", "from 1 to 65535"),
    ("http://bob:hunter22@proxy.corp.invalid:99999", "from 1 to 65535"),
    ("http://bob:hunter22@proxy.corp.invalid:http", "from 1 to 65535"),
    ("http://bob:hunter22@proxy.corp.invalid:3128/pac?x=1", "path, query or fragment"),
    ("http://bob:hunter22@[fe80::1]:3128", "IPv6 addresses are not supported"),
    ("http://bob:hunter22@0.0.0.0:3128", "not a host name"),
    ("http://bob:hunter22@proxy_1.corp.invalid:3128", "not a host name"),
    ("http://bob:hunter22@proxy.corp.invalid;http_access:3128", "not a host name"),
    ("http://bob:hunter 22@proxy.corp.invalid:3128", "spaces or control characters"),
    ("http://bob:hunter22\n@proxy.corp.invalid:3128", "spaces or control characters"),
    ("http://:hunter22@proxy.corp.invalid:3128", "user name before '@' is empty"),
    ("http://bob%3Ax:hunter22@proxy.corp.invalid:3128", "contains ':'"),
    ("http://bob:hunter22%0A@proxy.corp.invalid:3128", "control characters"),
    ("http://*:hunter22@proxy.corp.invalid:3128", "squid login mode"),
    ("http://%2Abob:hunter22@proxy.corp.invalid:3128", "squid login mode"),
    ("http://NEGOTIATE:hunter22@proxy.corp.invalid:3128", "squid login mode"),
    ("bob:hunt://er22@proxy.corp.invalid:3128", "not a proxy URL"),
])
def test_bad_upstream_urls_say_what_to_do_and_never_show_the_password(text, expected):
    with pytest.raises(up.UpstreamProxyError) as raised:
        up.parse_upstream_proxy(text)
    message = str(raised.value)
    assert isinstance(raised.value, UserInputError)  # exit 2 through the CLI
    assert expected in message and message.startswith("--upstream-proxy")
    assert "use --upstream-proxy http://[USER:PASSWORD@]HOST:PORT, or --upstream-proxy none" in message
    assert "hunter" not in message and "\n" not in message


def test_flag_then_environment_in_order_and_none_disables():
    env = {"HTTPS_PROXY": "http://a.corp.invalid:1", "https_proxy": "http://b.corp.invalid:2",
           "HTTP_PROXY": "http://c.corp.invalid:3", "http_proxy": "http://d.corp.invalid:4",
           "NO_PROXY": "Localhost, .Internal.invalid", "no_proxy": "localhost,mirror.invalid"}
    assert up.resolve_upstream_proxy("http://flag.corp.invalid:9", env).host == "flag.corp.invalid"
    assert up.resolve_upstream_proxy(None, env).host == "a.corp.invalid"
    assert up.resolve_upstream_proxy(None, env).source == "HTTPS_PROXY (from the environment)"
    assert up.resolve_upstream_proxy(None, env).no_proxy == ("localhost", ".internal.invalid", "mirror.invalid")
    for name, host in (("HTTPS_PROXY", "b"), ("https_proxy", "c"), ("HTTP_PROXY", "d")):
        env.pop(name)
        assert up.resolve_upstream_proxy(None, env).host == f"{host}.corp.invalid"
    assert up.resolve_upstream_proxy("none", env) is None and up.resolve_upstream_proxy(" NONE ", env) is None
    assert up.resolve_upstream_proxy(None, {"HTTPS_PROXY": " ", "NO_PROXY": "*"}) is None
    with pytest.raises(up.UpstreamProxyError, match=r"^HTTPS_PROXY \(from the environment\) 'socks5://\*\*\*@"):
        up.resolve_upstream_proxy(None, {"HTTPS_PROXY": "socks5://bob:hunter22@p.corp.invalid:1"})


# ------------------------------------------------------------------------------------------------- masking (unit)

def test_credentials_never_show_in_reprs_or_serialisations(tmp_path):
    proxy = up.parse_upstream_proxy(URL_WITH_LOGIN)
    request = InstallRequest("npm", "x@1.0.0", "x", "npm:x@1.0.0", upstream_proxy=proxy)
    options = ScanOptions(target="npm:x", upstream_proxy=proxy)
    shown = [repr(proxy), str(proxy), repr(request), str(request), repr(options), f"{proxy}", repr(proxy.credentials),
             repr(dataclasses.asdict(request)), repr(up.chain_settings(proxy, ["registry.npmjs.org"]))]
    for text in shown:
        for secret in proxy.secrets():
            assert secret not in text
        assert "hunter" not in text and "s3cr3t" not in text
    with pytest.raises(TypeError):  # an accidental json.dumps fails loudly instead of writing the login
        json.dumps(dataclasses.asdict(request), default=None)


def test_secrets_cover_every_form_and_scrub_removes_them():
    proxy = up.parse_upstream_proxy(URL_WITH_LOGIN)
    basic = base64.b64encode(f"{USER}:{PASSWORD}".encode()).decode()
    assert {f"{USER}:{PASSWORD}", proxy.credentials.squid_login(), basic, USER, PASSWORD} <= set(proxy.secrets())
    text = (f"Processing: cache_peer h parent 1 0 login={proxy.credentials.squid_login()} | auth=Basic {basic} | "
            f"{PASSWORD} | {quote(PASSWORD, safe='')}")
    scrubbed = up.scrub(text, proxy.secrets())
    assert "s3cr3t" not in scrubbed and basic not in scrubbed and USER not in scrubbed
    assert "login=***" in scrubbed
    assert up.scrub("no secrets here", ()) == "no secrets here"
    short = up.parse_upstream_proxy("http://ab:cd@proxy.corp.invalid:1")  # short values: only the whole pair
    assert "ab" not in short.secrets() and "ab:cd" in short.secrets()


@pytest.mark.parametrize(("text", "redacted"), [
    ("http://bob:hunter22@proxy.corp.invalid:3128", "http://***@proxy.corp.invalid:3128"),
    ("bob:hunter22@proxy.corp.invalid:3128", "***@proxy.corp.invalid:3128"),
    ("http://bob:hun@ter22@proxy.corp.invalid:1/", "http://***@proxy.corp.invalid:1/"),
    ("http://proxy.corp.invalid:3128", "http://proxy.corp.invalid:3128"),
])
def test_redact_url(text, redacted):
    assert up.redact_url(text) == redacted


# ------------------------------------------------------------------------------------------------ NO_PROXY (unit)

@pytest.mark.parametrize(("allow", "no_proxy", "direct"), [
    (["registry.npmjs.org"], ["localhost", "127.0.0.1", "::1"], ()),
    (["registry.npmjs.org"], ["registry.npmjs.org"], ("registry.npmjs.org",)),
    (["registry.npmjs.org"], ["npmjs.org"], ("registry.npmjs.org",)),  # a domain covers its subdomains
    (["registry.npmjs.org"], [".npmjs.org"], ("registry.npmjs.org",)),
    (["registry.npmjs.org"], ["*.npmjs.org"], ("registry.npmjs.org",)),
    (["registry.npmjs.org"], ["registry.npmjs.org:443"], ("registry.npmjs.org",)),
    (["registry.npmjs.org"], ["*"], ("registry.npmjs.org",)),
    (["pypi.org", "files.pythonhosted.org"], ["pythonhosted.org"], ("files.pythonhosted.org",)),
    (["mirror.notexample.invalid"], ["example.invalid"], ()),  # a suffix is not a subdomain
    (["example.invalid"], ["mirror.example.invalid"], ()),  # a subdomain of a plain host is not that host
    ([".example.invalid"], ["cdn.example.invalid"], (".cdn.example.invalid",)),  # part of a wildcard: only that part
    ([".example.invalid"], ["cdn.example.invalid", "example.invalid"], (".example.invalid",)),
    (["registry.npmjs.org"], ["10.0.0.0/8", "172.17.0.1", "[::1]:3128", "bad_name.invalid", ""], ()),
])
def test_no_proxy_matching_stays_inside_the_allowlist(allow, no_proxy, direct):
    assert up.direct_hosts(allow, no_proxy) == direct
    assert all(proxy_allowlist.host_allowed(host.lstrip("."), allow) for host in direct)


def test_chain_settings_put_nothing_secret_in_the_environment():
    assert up.chain_settings(None, ["registry.npmjs.org"]) == up.ChainSettings()
    proxy = dataclasses.replace(up.parse_upstream_proxy(URL_WITH_LOGIN), no_proxy=("npmjs.org",))
    chain = up.chain_settings(proxy, ["registry.npmjs.org", "other.example.invalid"])
    assert chain.environment == {"MCP_EGRESS_UPSTREAM_HOST": "proxy.corp.invalid", "MCP_EGRESS_UPSTREAM_PORT": "3128",
                                 "MCP_EGRESS_DIRECT_DOMAINS": "registry.npmjs.org",
                                 "MCP_EGRESS_UPSTREAM_LOGIN": "stdin"}
    assert chain.stdin == f"{proxy.credentials.squid_login()}\n".encode()
    assert chain.extra_hosts == {}
    loopback = up.chain_settings(up.parse_upstream_proxy("http://127.0.0.1:3128"), ["registry.npmjs.org"])
    assert loopback.environment == {"MCP_EGRESS_UPSTREAM_HOST": "host.docker.internal",
                                    "MCP_EGRESS_UPSTREAM_PORT": "3128"}
    assert loopback.extra_hosts == {"host.docker.internal": "host-gateway"} and loopback.stdin is None


# ----------------------------------------------------------------------------- reachability probe targets (unit)

def test_probe_targets_are_the_upstreams_address_and_the_install_gateway_on_its_port():
    gateway = "172.30.0.1"
    loopback = reachability.upstream_probe_targets(up.parse_upstream_proxy("http://127.0.0.1:3128"), gateway)
    assert [t.address for t in loopback] == ["host.docker.internal:3128", "172.30.0.1:3128"]
    literal = reachability.upstream_probe_targets(up.parse_upstream_proxy("http://172.17.0.9:8080"), gateway)
    assert [t.address for t in literal] == ["172.17.0.9:8080", "172.30.0.1:8080"]
    # A name: its IPv4 addresses as this host resolves them; a loopback answer would be the container's own.
    named = reachability.upstream_probe_targets(up.parse_upstream_proxy("http://proxy.corp.invalid:3128"), gateway,
                                      resolve=lambda host: ["10.1.2.3", "127.0.0.1", "10.1.2.3", "::1", "x"])
    assert [t.address for t in named] == ["10.1.2.3:3128", "172.30.0.1:3128"]
    unresolved = reachability.upstream_probe_targets(up.parse_upstream_proxy("http://proxy.corp.invalid:3128"), gateway,
                                           resolve=lambda host: [])
    assert [t.address for t in unresolved] == ["172.30.0.1:3128"]
    same = reachability.upstream_probe_targets(up.parse_upstream_proxy("http://172.30.0.1:3128"), gateway)
    assert [t.address for t in same] == ["172.30.0.1:3128"]
    assert [t.address for t in reachability.upstream_probe_targets(up.parse_upstream_proxy("localhost:1"), None)] == [
        "host.docker.internal:1"]


def test_the_refusal_is_one_line_saying_what_to_do_without_the_login():
    upstream = up.parse_upstream_proxy(URL_WITH_LOGIN.replace("proxy.corp.invalid", "127.0.0.1"))
    targets = reachability.upstream_probe_targets(upstream, "172.30.0.1")
    message = reachability.upstream_reachable_message(upstream, targets)
    assert message.startswith("the upstream proxy http://***@127.0.0.1:3128 is reachable from the isolated install "
                              "network (host.docker.internal:3128 (the Docker host's bridge gateway) and "
                              "172.30.0.1:3128 (the install network's gateway")
    assert "iptables -I INPUT -i br-+ -p tcp --dport 3128 -j DROP" in message and "another host" in message
    assert "\n" not in message
    for secret in upstream.secrets():
        assert secret not in message


# ------------------------------------------------------------------------------------- config rendering (unit, sh)

MARKER = "0f3c9a7e5b1d4c2a8e6f0b9d7c5a3e1f"


def _render(env: dict[str, str], stdin: str = "") -> subprocess.CompletedProcess[str]:
    """images/proxy/render-config.sh as the proxy's entry point runs it, here with the host's sh and sed (with a log
    marker unless `env` says otherwise)."""
    return subprocess.run(["sh", str(PROXY_DIR / "render-config.sh"), str(PROXY_DIR / "squid.conf.template")],
                          input=stdin, capture_output=True, text=True, timeout=30, check=False,
                          env={"PATH": os.environ.get("PATH", "/usr/bin:/bin"), "MCP_EGRESS_LOG_MARKER": MARKER,
                               **env})


def _directives(config: str) -> list[str]:
    return [line for line in config.splitlines() if line.strip() and not line.startswith("#")]


def test_rendering_without_an_upstream_goes_direct():
    result = _render({"MCP_EGRESS_ALLOW_DOMAINS": "registry.npmjs.org"})
    assert result.returncode == 0, result.stderr
    lines = _directives(result.stdout)
    assert "acl registry_hosts dstdomain -n registry.npmjs.org" in lines
    assert not [line for line in lines if line.startswith(("cache_peer", "never_direct", "always_direct"))]
    assert "@" not in "\n".join(lines)  # every placeholder filled (or commented out)


def test_rendering_refuses_the_cache_manager_first_and_allows_only_connect():
    result = _render({"MCP_EGRESS_ALLOW_DOMAINS": "registry.npmjs.org", "MCP_EGRESS_ALLOW_PORTS": "443 8443"})
    assert result.returncode == 0, result.stderr
    lines = _directives(result.stdout)
    access = [line for line in lines if line.startswith("http_access ")]
    assert access == ["http_access deny manager", "http_access allow CONNECT registry_hosts registry_ports",
                      "http_access deny all"]
    assert "cachemgr_passwd disable all" in lines and "acl registry_ports port 443 8443" in lines
    assert not [line for line in lines if "plain" in line]  # no GET/HEAD without port 80 on the allowlist
    # squid's diagnostic log is off (it quotes client requests); access-log lines carry the marker.
    assert "cache_log /dev/null" in lines and "debug_options ALL,0" in lines
    assert f"logformat mcpegress MCPEGRESS {MARKER} %ts.%03tu %>a %rm %>rd %>rP %Ss/%>Hs %<st %tr" in lines
    assert "access_log stdio:/dev/stdout mcpegress" in lines
    assert not [line for line in lines if "stderr" in line]


def test_rendering_with_port_80_allows_plain_get_and_head_there_only():
    result = _render({"MCP_EGRESS_ALLOW_DOMAINS": "mirror.example.invalid", "MCP_EGRESS_ALLOW_PORTS": "443 80"})
    assert result.returncode == 0, result.stderr
    lines = _directives(result.stdout)
    assert [line for line in lines if line.startswith("http_access ")] == [
        "http_access deny manager", "http_access allow CONNECT registry_hosts registry_ports",
        "http_access allow plain_methods registry_hosts plain_port", "http_access deny all"]
    assert "acl plain_methods method GET HEAD" in lines and "acl plain_port port 80" in lines
    # 8080 is not 80: no plain http.
    other = _directives(_render({"MCP_EGRESS_ALLOW_DOMAINS": "m.invalid", "MCP_EGRESS_ALLOW_PORTS": "8080"}).stdout)
    assert not [line for line in other if "plain" in line]


@pytest.mark.parametrize(("marker", "expected"), [
    ("", "log marker is missing"), ("short1", "16 to 64 characters"), ("a" * 65, "16 to 64 characters"),
    ("0123456789abcdef/", "not letters and digits"), ("0123456789abcdef 443", "not letters and digits"),
    ("0123456789abcdef\nhttp_access allow all", "not letters and digits"),
    ("0123456789abcdef&%", "not letters and digits"),
])
def test_rendering_refuses_a_bad_log_marker(marker, expected):
    result = _render({"MCP_EGRESS_ALLOW_DOMAINS": "registry.npmjs.org", "MCP_EGRESS_LOG_MARKER": marker})
    assert result.returncode == 64 and result.stdout == "", result
    assert result.stderr.startswith("MCPEGRESS-ERROR ") and expected in result.stderr


def test_rendering_with_an_upstream_login_and_direct_hosts():
    proxy = up.parse_upstream_proxy(URL_WITH_LOGIN)
    result = _render({"MCP_EGRESS_ALLOW_DOMAINS": "registry.npmjs.org .example.invalid",
                      "MCP_EGRESS_UPSTREAM_HOST": "proxy.corp.invalid", "MCP_EGRESS_UPSTREAM_PORT": "3128",
                      "MCP_EGRESS_DIRECT_DOMAINS": ".cdn.example.invalid", "MCP_EGRESS_UPSTREAM_LOGIN": "stdin"},
                     stdin=f"{proxy.credentials.squid_login()}\n")
    assert result.returncode == 0, result.stderr
    lines = _directives(result.stdout)
    chain = lines[lines.index("http_access deny all"):]
    assert ("cache_peer proxy.corp.invalid parent 3128 0 no-query no-digest no-netdb-exchange default name=upstream "
            f"login={proxy.credentials.squid_login()}") in chain
    assert "acl direct_hosts dstdomain -n .cdn.example.invalid" in chain
    assert chain.index("always_direct allow direct_hosts") < chain.index("never_direct allow all")
    assert lines[lines.index("http_access allow CONNECT registry_hosts registry_ports") + 1] == "http_access deny all"
    assert "@" not in "\n".join(lines)


def test_rendering_an_upstream_without_direct_hosts_or_login():
    result = _render({"MCP_EGRESS_ALLOW_DOMAINS": "registry.npmjs.org", "MCP_EGRESS_UPSTREAM_HOST": "10.9.8.7",
                      "MCP_EGRESS_UPSTREAM_PORT": "8080"})
    lines = _directives(result.stdout)
    assert "cache_peer 10.9.8.7 parent 8080 0 no-query no-digest no-netdb-exchange default name=upstream" in lines
    assert "never_direct allow all" in lines and not [x for x in lines if "direct_hosts" in x]


@pytest.mark.parametrize(("env", "stdin", "expected"), [
    ({"MCP_EGRESS_UPSTREAM_HOST": "h.invalid\nhttp_access allow all", "MCP_EGRESS_UPSTREAM_PORT": "1"}, "",
     "bad characters in the upstream host"),
    ({"MCP_EGRESS_UPSTREAM_HOST": "h.invalid/x", "MCP_EGRESS_UPSTREAM_PORT": "1"}, "", "upstream host"),
    ({"MCP_EGRESS_UPSTREAM_HOST": "-h.invalid", "MCP_EGRESS_UPSTREAM_PORT": "1"}, "", "upstream host"),
    ({"MCP_EGRESS_UPSTREAM_HOST": "h.invalid", "MCP_EGRESS_UPSTREAM_PORT": "1 login=PASS"}, "", "not a number"),
    ({"MCP_EGRESS_UPSTREAM_HOST": "h.invalid", "MCP_EGRESS_UPSTREAM_PORT": ""}, "", "not a number"),
    ({"MCP_EGRESS_UPSTREAM_HOST": "h.invalid", "MCP_EGRESS_UPSTREAM_PORT": "1",
      "MCP_EGRESS_DIRECT_DOMAINS": "a.invalid\nhttp_access allow all"}, "", "direct hosts"),
    ({"MCP_EGRESS_UPSTREAM_HOST": "h.invalid", "MCP_EGRESS_UPSTREAM_PORT": "1", "MCP_EGRESS_UPSTREAM_LOGIN": "stdin"},
     "u:hunter22 http_access allow all\n", "not percent-encoded"),
    ({"MCP_EGRESS_UPSTREAM_HOST": "h.invalid", "MCP_EGRESS_UPSTREAM_PORT": "1", "MCP_EGRESS_UPSTREAM_LOGIN": "stdin"},
     "u:hunter22/s&x\n", "not percent-encoded"),
    ({"MCP_EGRESS_UPSTREAM_HOST": "h.invalid", "MCP_EGRESS_UPSTREAM_PORT": "1", "MCP_EGRESS_UPSTREAM_LOGIN": "stdin"},
     "hunter22\n", "not user:password"),
    ({"MCP_EGRESS_UPSTREAM_HOST": "h.invalid", "MCP_EGRESS_UPSTREAM_PORT": "1", "MCP_EGRESS_UPSTREAM_LOGIN": "stdin"},
     ":hunter22\n", "not user:password"),
    ({"MCP_EGRESS_UPSTREAM_HOST": "h.invalid", "MCP_EGRESS_UPSTREAM_PORT": "1", "MCP_EGRESS_UPSTREAM_LOGIN": "stdin"},
     "", "missing"),
    ({"MCP_EGRESS_UPSTREAM_PORT": "1"}, "", "without MCP_EGRESS_UPSTREAM_HOST"),
    ({"MCP_EGRESS_DIRECT_DOMAINS": "a.invalid"}, "", "without MCP_EGRESS_UPSTREAM_HOST"),
])
def test_rendering_refuses_anything_that_could_inject_config(env, stdin, expected):
    result = _render({"MCP_EGRESS_ALLOW_DOMAINS": "registry.npmjs.org", **env}, stdin)
    assert result.returncode == 64 and result.stdout == ""
    assert result.stderr.startswith("MCPEGRESS-ERROR ") and expected in result.stderr
    assert "hunter" not in result.stderr


def test_the_image_ships_the_renderer():
    dockerfile = (PROXY_DIR / "Dockerfile").read_text()
    assert "COPY render-config.sh /usr/local/lib/mcp-sandbox/render-config.sh" in dockerfile
    assert "render-config.sh" in (PROXY_DIR / "entrypoint.sh").read_text()


# ------------------------------------------------------------------------------------------------------- CLI (unit)

@pytest.mark.parametrize(("args", "env", "expected"), [
    (["scan", "npm:x", "--upstream-proxy", "https://bob:hunter22@proxy.corp.invalid:3128"], {},
     "error: --upstream-proxy 'https://***@proxy.corp.invalid:3128': https:// is not supported"),
    (["scan", "npm:x", "--upstream-proxy", "http://bob:hunter22@proxy.corp.invalid"],
     {"HTTPS_PROXY": "http://proxy.corp.invalid:3128"},
     "error: --upstream-proxy 'http://***@proxy.corp.invalid': has no port"),
    (["init-fixtures", "/nonexistent/fixtures.json", "npm:x", "--upstream-proxy", "http://proxy.corp.invalid"], {},
     "has no port"),
    (["lock", "--from", "tools.json", "--upstream-proxy", "none"], {}, "applies to installing a live TARGET"),
])
def test_cli_rejects_bad_upstreams_with_one_line_and_exit_2(args, env, expected):
    result = run_cli(*args, env=env, timeout=60)
    assert result.returncode == 2, result
    assert expected in result.stderr and result.stderr.strip().count("\n") == 0, result.stderr
    assert "hunter" not in result.stderr + result.stdout and "Traceback" not in result.stderr


@pytest.mark.parametrize("value", ["https://bob:hunter22@proxy.corp.invalid:3128", "socks5://proxy.corp.invalid:1080",
                                   "http://bob:hunter22@proxy.corp.invalid"])
def test_an_unusable_environment_proxy_is_ignored_with_one_warning(value):
    """HTTPS_PROXY is the host's general setting: one the install proxy cannot chain to must not stop every scan
    (a cached one, one on a host that reaches the registry directly); the install goes direct, with a warning."""
    warnings: list[str] = []
    assert cli_upstream.upstream_from_cli(None, {"HTTPS_PROXY": value}, warn=warnings.append) is None
    [warning] = warnings
    assert warning.startswith("warning: ignoring HTTPS_PROXY (from the environment) '")
    assert "the install proxy reaches the registry directly" in warning and "--upstream-proxy none" in warning
    assert "\n" not in warning and "hunter" not in warning
    # `none` silences it; a usable value is used without a word; the flag wins over the environment.
    assert cli_upstream.upstream_from_cli("none", {"HTTPS_PROXY": value}, warn=warnings.append) is None
    shadowed = cli_upstream.upstream_from_cli(None, {"HTTPS_PROXY": value, "HTTP_PROXY": "http://other.invalid:1"},
                                              warn=warnings.append)
    assert shadowed is None  # HTTPS_PROXY is the one read; it is unusable, HTTP_PROXY is not a fallback for it
    used = cli_upstream.upstream_from_cli(None, {"HTTPS_PROXY": "http://p.corp.invalid:3128"}, warn=warnings.append)
    assert used is not None and used.host == "p.corp.invalid"
    assert len(warnings) == 2


def test_a_bad_flag_is_still_an_error():
    with pytest.raises(up.UpstreamProxyError, match=r"^--upstream-proxy 'https://\*\*\*@p.corp.invalid:1': https://"):
        cli_upstream.upstream_from_cli("https://bob:hunter22@p.corp.invalid:1", {"HTTPS_PROXY": "http://ok.invalid:1"},
                                       warn=lambda _: pytest.fail("a bad flag must not be a warning"))


def test_the_cli_warns_about_an_unusable_https_proxy_and_goes_on():
    """Through the CLI: the warning, then the scan goes on to its next check (here a bad --memory, so nothing is
    installed), where before the HTTPS_PROXY alone was exit 2."""
    result = run_cli("scan", "npm:x", "--memory", "1k",
                     env={"HTTPS_PROXY": "socks5://bob:hunter22@proxy.corp.invalid:1080"}, timeout=60)
    lines = result.stderr.strip().splitlines()
    assert result.returncode == 2 and len(lines) == 2, result.stderr
    assert lines[0].startswith("warning: ignoring HTTPS_PROXY (from the environment) 'socks5://***@proxy.corp.inv")
    assert "socks5:// is not supported" in lines[0]
    assert lines[1].startswith("error: --memory '1k'")
    assert "hunter" not in result.stderr + result.stdout


# ------------------------------------------------------------------------------------------------------ real engine

UPSTREAM_CONF = """\
http_port 3128
acl registries dstdomain registry.npmjs.org pypi.org files.pythonhosted.org
acl CONNECT method CONNECT
http_access allow CONNECT registries
http_access deny all
logformat upstream UPSTREAM %>a %rm %>rd %>rP %Ss/%>Hs auth=%{Proxy-Authorization}>h
access_log stdio:/dev/stdout upstream
cache_log stdio:/dev/stderr
cache deny all
cache_mem 0 MB
pid_filename none
shutdown_lifetime 0 seconds
pinger_enable off
"""

CONNECT_SCRIPT = r"""node -e '
const http = require("http"); const proxy = new URL(process.env.HTTP_PROXY);
for (const target of process.argv.slice(1)) {
  http.request({host: proxy.hostname, port: proxy.port, method: "CONNECT", path: target})
    .on("connect", (r, sock) => { console.log("CONNECT", target, r.statusCode); sock.destroy(); })
    .on("error", e => console.log("CONNECT", target, e.code)).end();
}' registry.npmjs.org:443 PHONE:443"""

NPM_INSTALL_SCRIPT = r"""set -e
npm install --no-audit --no-fund --loglevel=warn --prefix /tmp/p is-number@7.0.0
test -f /tmp/p/node_modules/is-number/package.json && echo NPM-OK
""" + CONNECT_SCRIPT


@dataclasses.dataclass
class Upstream:
    container_id: str
    address: str  # on the default bridge
    published_port: int | None = None  # on the bridge gateway, when asked

    def log(self, session: SandboxSession) -> str:
        return session.client.api.logs(self.container_id, stdout=True, stderr=True).decode("utf-8", "replace")

    def requests(self, session: SandboxSession) -> list[str]:
        return [line for line in self.log(session).splitlines() if line.startswith("UPSTREAM ")
                and " - - - " not in line]  # squid's own peer probes carry no request


def _bridge_gateway(client) -> str:
    """The default bridge's gateway (the docker0 address). An engine that found docker0 already configured may list
    only the subnet; the gateway is then its first address, as dockerd assigns it."""
    config = client.api.inspect_network("bridge")["IPAM"]["Config"][0]
    return str(config.get("Gateway") or ipaddress.ip_network(config["Subnet"])[1])


def _start_upstream(session: SandboxSession, *, publish: bool = False) -> Upstream:
    """The "corporate" proxy: a plain squid from the project's proxy image on the default bridge, allowing only the
    registries and logging each request with the Proxy-Authorization it received."""
    api = session.client.api
    image = images.ensure_runtime_image(session.client, "proxy").tag
    bindings = {"port_bindings": {3128: (_bridge_gateway(session.client), None)}} if publish else {}
    host_config = hardened_host_config(api, memory_bytes=128 * 1024**2, nano_cpus=500_000_000, pids_limit=64,
                                       network_mode="bridge", read_only=True,
                                       tmpfs={"/tmp": "rw,nosuid,nodev,noexec,size=16m,mode=1777"}, **bindings)
    container_id = session.create_container(
        "test-upstream", image=image, environment={"UPSTREAM_CONF": UPSTREAM_CONF}, host_config=host_config,
        entrypoint=["sh", "-c", 'printf "%s" "$UPSTREAM_CONF" > /tmp/squid.conf && exec squid -N -f /tmp/squid.conf'],
        ports=[3128] if publish else None)
    api.start(container_id)
    deadline = time.monotonic() + 30
    while "Accepting HTTP Socket connections" not in api.logs(container_id).decode("utf-8", "replace"):
        assert time.monotonic() < deadline, api.logs(container_id)
        time.sleep(0.05)
    inspect = api.inspect_container(container_id)
    port = None
    if publish:
        port = int(inspect["NetworkSettings"]["Ports"]["3128/tcp"][0]["HostPort"])
    return Upstream(container_id, inspect["NetworkSettings"]["Networks"]["bridge"]["IPAddress"], port)


def _run_client(session: SandboxSession, proxy: ie.InstallProxy, script: str) -> tuple[int, str, dict]:
    """A container on the install network only, configured like the install container, running `script`."""
    return run_on_install_network(session, proxy, images.ensure_runtime_image(session.client, "node").tag, script)


def _assert_hidden(secrets: tuple[str, ...], *texts: str) -> None:
    for text in texts:
        for secret in secrets:
            assert secret not in text, f"a credential form is visible: {text[:200]!r}"


@pytest.mark.docker
@pytest.mark.registry
def test_install_chains_through_the_upstream_with_its_login(docker_client, no_leftovers):
    with SandboxSession(docker_client) as session:
        upstream_box = _start_upstream(session)
        upstream = up.parse_upstream_proxy(
            f"http://{USER}:{quote(PASSWORD, safe='')}@{upstream_box.address}:3128")
        started = time.monotonic()
        proxy = ie.start_install_proxy(session, proxy_allowlist.registry_hosts("npm"), upstream=upstream)
        start_seconds = time.monotonic() - started
        code, output, install_inspect = _run_client(session, proxy, NPM_INSTALL_SCRIPT)
        assert code == 0, output
        assert "NPM-OK" in output
        assert "CONNECT registry.npmjs.org:443 200" in output and f"CONNECT {PHONE_HOME}:443 403" in output

        # The upstream saw the registry tunnels, with our login, and nothing else.
        requests = upstream_box.requests(session)
        basic = base64.b64encode(f"{USER}:{PASSWORD}".encode()).decode()
        tunnels = [line for line in requests if " CONNECT registry.npmjs.org 443 TCP_TUNNEL/200 " in line]
        assert len(tunnels) >= 2, requests  # npm's fetches and the script's CONNECT
        assert all(line.endswith(f"auth=Basic%20{basic}") for line in tunnels), tunnels
        assert not [line for line in requests if "invalid" in line], requests

        # Our proxy still allows only the registry, refuses the rest, and logs it as before (I7).
        by_key = {(a.via, a.host, a.port): a for a in proxy.attempts()}
        assert by_key[("proxy", "registry.npmjs.org", 443)].allowed
        assert not by_key[("proxy", PHONE_HOME, 443)].allowed
        assert {a.host for a in proxy_log.denied(proxy.attempts())} == {PHONE_HOME}

        # The login is nowhere an engine user or a report could read it.
        proxy_inspect = docker_client.api.inspect_container(proxy.container_id)
        assert proxy_inspect["Config"]["Env"].count("MCP_EGRESS_UPSTREAM_LOGIN=stdin") == 1
        _assert_hidden(upstream.secrets(), json.dumps(proxy_inspect), json.dumps(install_inspect), proxy.log_tail(500),
                       docker_client.api.logs(proxy.container_id).decode("utf-8", "replace"), repr(proxy), output)
    assert session.teardown_result is not None and session.teardown_result.complete
    print(f"install proxy start with an upstream: {start_seconds:.2f} s")


@pytest.mark.docker
@pytest.mark.registry
def test_no_proxy_hosts_go_direct_and_the_rest_through_the_upstream(docker_client, no_leftovers):
    with SandboxSession(docker_client) as session:
        upstream_box = _start_upstream(session)
        upstream = up.resolve_upstream_proxy(None, {"HTTPS_PROXY": f"http://{upstream_box.address}:3128",
                                                    "NO_PROXY": "localhost,127.0.0.1,npmjs.org"})
        # `.example.invalid` is allowlisted here but not in NO_PROXY: it must go through the upstream (which
        # refuses it without resolving anything), never directly.
        proxy = ie.start_install_proxy(session, ["registry.npmjs.org", ".example.invalid"], upstream=upstream)
        env = docker_client.api.inspect_container(proxy.container_id)["Config"]["Env"]
        assert "MCP_EGRESS_DIRECT_DOMAINS=registry.npmjs.org" in env
        code, output, _ = _run_client(session, proxy, CONNECT_SCRIPT)
        assert code == 0 and "CONNECT registry.npmjs.org:443 200" in output, output
        assert f"CONNECT {PHONE_HOME}:443 403" in output, output  # the upstream's refusal, relayed
        requests = upstream_box.requests(session)
        assert not [line for line in requests if "registry.npmjs.org" in line], requests  # NO_PROXY: direct
        # squid says TCP_DENIED_ABORTED/403 when the client hung up before it finished logging: still a refusal
        assert [(*line.split()[2:5], line.split()[5].split("/")[1], line.split()[5].startswith("TCP_DENIED"))
                for line in requests] == [("CONNECT", PHONE_HOME, "443", "403", True)], requests


@pytest.mark.docker
@pytest.mark.registry
def test_a_loopback_upstream_is_reached_through_the_host_gateway(docker_client, no_leftovers):
    """cntlm/px style: the user's proxy listens on the host; a loopback URL reaches it at the bridge gateway."""
    with SandboxSession(docker_client) as session:
        upstream_box = _start_upstream(session, publish=True)  # listens on the host's bridge gateway address
        upstream = up.parse_upstream_proxy(f"http://127.0.0.1:{upstream_box.published_port}")
        proxy = ie.start_install_proxy(session, proxy_allowlist.registry_hosts("npm"), upstream=upstream)
        inspect = docker_client.api.inspect_container(proxy.container_id)
        assert inspect["HostConfig"]["ExtraHosts"] == ["host.docker.internal:host-gateway"]
        assert "MCP_EGRESS_UPSTREAM_HOST=host.docker.internal" in inspect["Config"]["Env"]
        code, output, _ = _run_client(session, proxy, CONNECT_SCRIPT)
        assert code == 0 and "CONNECT registry.npmjs.org:443 200" in output, output
        tunnels = [line for line in upstream_box.requests(session) if " CONNECT registry.npmjs.org 443 " in line]
        assert tunnels and all(line.split()[1] == _bridge_gateway(docker_client) for line in tunnels), tunnels
        assert not [line for line in upstream_box.requests(session) if "invalid" in line]


@pytest.mark.docker
def test_an_unreachable_upstream_fails_the_request_not_the_allowlist(docker_client, no_leftovers):
    """A dead upstream fails the install's request (never a direct connection); a refused host is still a 403."""
    with SandboxSession(docker_client) as session:
        # Port 1 on the host's bridge gateway: nothing listens, the connection is refused at once, on this machine.
        upstream = up.parse_upstream_proxy("http://127.0.0.1:1")
        proxy = ie.start_install_proxy(session, proxy_allowlist.registry_hosts("npm"), upstream=upstream)
        code, output, _ = _run_client(session, proxy, CONNECT_SCRIPT)
        assert code == 0, output
        # squid answers a CONNECT it cannot forward with 500 (ERR_CANNOT_FORWARD); direct would have been a 200.
        assert "CONNECT registry.npmjs.org:443 500" in output and f"CONNECT {PHONE_HOME}:443 403" in output, output
        by_host = {a.host: a for a in proxy.attempts() if a.via == "proxy"}
        assert by_host["registry.npmjs.org"].statuses[0].endswith("/500"), by_host
        assert not by_host[PHONE_HOME].allowed


@pytest.mark.docker
@pytest.mark.registry
def test_a_scan_chains_to_https_proxy_and_its_login_stays_out_of_every_output(docker_client, tmp_path,
                                                                                no_leftovers):
    """The user's path: HTTPS_PROXY with a login in the environment, a real PyPI server scanned end to end."""
    with SandboxSession(docker_client) as session:
        upstream_box = _start_upstream(session)
        url = f"http://{USER}:{quote(PASSWORD, safe='')}@{upstream_box.address}:3128"
        upstream = up.parse_upstream_proxy(url)
        report_path = tmp_path / "report.json"
        started = time.monotonic()
        result = run_cli("scan", "pypi:mcp-server-time", "--no-cache", "--no-probes", "--json", str(report_path),
                         env={"HTTPS_PROXY": url, "NO_PROXY": "localhost,127.0.0.1"}, timeout=600)
        seconds = time.monotonic() - started
        assert result.returncode in (0, 1), result.stderr[-2000:]
        report = report_path.read_text()
        assert json.loads(report)["tools"], "the server listed no tools"
        tunnels = [line for line in upstream_box.requests(session) if " CONNECT " in line]
        hosts = {line.split()[3] for line in tunnels}
        assert {"pypi.org", "files.pythonhosted.org"} <= hosts, tunnels
        # The install proxy's tunnels (from its bridge address), not only the host-side lookups (from the gateway).
        assert {line.split()[1] for line in tunnels} - {_bridge_gateway(docker_client)}, tunnels
        basic = base64.b64encode(f"{USER}:{PASSWORD}".encode()).decode()
        assert all(line.endswith(f"auth=Basic%20{basic}") for line in tunnels), tunnels
        # Where the cold install went, in the report: each of its parts, together no more than the install.
        timings = json.loads(report)["timings"]
        parts = [timings[f"install_{phase}"] for phase in ("proxy", "container", "steps", "finish", "commit")]
        assert all(isinstance(seconds, float) and seconds > 0 for seconds in parts), timings
        assert timings["install"] - 0.5 < sum(parts) <= timings["install"] + 0.01, timings  # + rounding
        installed = docker_client.api.inspect_image(json.loads(report)["install"]["image"])
        _assert_hidden(upstream.secrets(), report, result.stdout, result.stderr, json.dumps(installed))
    print(f"cold scan of pypi:mcp-server-time through the upstream: {seconds:.1f} s")



def _host_listener(address: str) -> socket.socket:
    """A TCP port listening on this machine (the Docker host), as a host-local cntlm/px told to listen on the
    bridge: the kernel completes connections to it from its backlog."""
    listener = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    try:
        listener.bind((address, 0))
    except OSError as exc:
        listener.close()
        pytest.skip(f"the engine is not on this machine ({address} is not a local address: {exc})")
    listener.listen(16)
    return listener


def _probe_containers(client, session: SandboxSession) -> list[dict]:
    return [c for c in labelled_containers(client, session.id) if c["Labels"].get(labels.ROLE) == reachability.PROBE_ROLE]


@pytest.mark.docker
def test_an_upstream_the_install_network_can_reach_is_refused(docker_client, no_leftovers):
    """Containers on an --internal network still reach services of the Docker host at its addresses (the bridge
    gateways): a host-local upstream listening there would let an install script skip the install proxy. A probe
    on the install network finds it, and the install proxy refuses to start, with one line saying what to do."""
    gateway = _bridge_gateway(docker_client)
    on_gateway = _host_listener(gateway)
    everywhere = _host_listener("0.0.0.0")
    port, any_port = on_gateway.getsockname()[1], everywhere.getsockname()[1]
    try:
        cases = [
            # cntlm/px on 127.0.0.1 in the URL, listening on the docker0 address as the README used to advise
            (f"http://{USER}:{quote(PASSWORD, safe='')}@127.0.0.1:{port}", [f"host.docker.internal:{port}"]),
            (f"http://{gateway}:{port}", [f"{gateway}:{port}"]),
            # listening on all interfaces: also at the install network's own gateway
            (f"http://127.0.0.1:{any_port}", [f"host.docker.internal:{any_port}", "the install network's gateway"]),
        ]
        for url, named in cases:
            upstream = up.parse_upstream_proxy(url)
            with SandboxSession(docker_client) as session:
                with pytest.raises(SandboxError) as raised:
                    ie.start_install_proxy(session, proxy_allowlist.registry_hosts("npm"), upstream=upstream)
                assert _probe_containers(docker_client, session) == []  # removed as soon as it answered
            message = str(raised.value)
            assert message.startswith(f"the upstream proxy {upstream.redacted} is reachable from the isolated "
                                      "install network (") and "\n" not in message, message
            assert all(text in message for text in named), message
            assert f"--dport {upstream.port} -j DROP" in message
            _assert_hidden(upstream.secrets(), message)
            assert session.teardown_result is not None and session.teardown_result.complete
    finally:
        on_gateway.close()
        everywhere.close()


@pytest.mark.docker
def test_an_upstream_only_the_bridge_reaches_is_accepted_and_hides_behind_the_cache_manager_refusal(
        docker_client, no_leftovers):
    """An upstream in another container on the default bridge: the install proxy reaches it, the install network
    does not (the probe ran, and found nothing). Through the chained proxy, squid's cache manager (which would list
    the upstream with its login) is refused."""
    script = r"""node -e '
const http = require("http"); const proxy = new URL(process.env.HTTP_PROXY);
for (const path of ["cache_object://registry.npmjs.org:443/server_list", "cache_object://registry.npmjs.org:443/config"]) {
  http.get({host: proxy.hostname, port: proxy.port, path, headers: {Host: "registry.npmjs.org:443"}}, r => {
    let body = ""; r.on("data", d => body += d);
    r.on("end", () => console.log("MANAGER", r.statusCode, JSON.stringify(body)));
  });
}'"""
    with SandboxSession(docker_client) as session:
        upstream_box = _start_upstream(session)
        upstream = up.parse_upstream_proxy(f"http://{USER}:{quote(PASSWORD, safe='')}@{upstream_box.address}:3128")
        since = time.time() - 1
        proxy = ie.start_install_proxy(session, proxy_allowlist.registry_hosts("npm"), upstream=upstream)
        events = docker_client.api.events(
            since=since, until=time.time() + 1, decode=True,
            filters={"type": "container", "label": [f"{labels.SESSION}={session.id}", f"{labels.ROLE}={reachability.PROBE_ROLE}"]})
        actions = [event.get("Action") or event.get("status") for event in events]
        assert "start" in actions and "destroy" in actions, actions  # the probe ran, and is gone
        assert _probe_containers(docker_client, session) == []
        code, output, _ = _run_client(session, proxy, script)
        assert code == 0 and output.count("MANAGER 403") == 2, output
        assert "neighbors" not in output and "login" not in output and "cache_peer" not in output, output
        _assert_hidden(upstream.secrets(), output)
        manager = [a for a in proxy.attempts() if a.host == "registry.npmjs.org" and not a.allowed]
        assert manager and manager[0].statuses == ("TCP_DENIED/403",)
        assert upstream_box.requests(session) == []  # a refused request never reaches the upstream
    assert session.teardown_result is not None and session.teardown_result.complete
