"""The one registry HTTP client (scanner.registry.client): its hosts come from the install allowlist, redirects stay on
them, the CA bundle is the user's or the system's, and resolving a target goes through it. Only the network is
mocked (httpx.MockTransport)."""

from __future__ import annotations

import datetime
import json
import ssl
from collections.abc import Callable
from pathlib import Path

import httpx
import pytest
from cryptography import x509
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec
from cryptography.x509.oid import NameOID

from sandbox.core.errors import SandboxError
from sandbox.install.proxy.allowlist import load_registries
from scanner.errors import UsageError
from scanner.registry.client import fetch, is_registry_host, make_client, registry_hosts, trusted_ssl_context
from scanner.ecosystems.registry import resolve
from scanner.registry.endpoints import RegistryEndpoints
from scanner.pipeline.targets import parse_target

Handler = Callable[[httpx.Request], httpx.Response]


def recording(handler: Handler) -> tuple[httpx.MockTransport, list[str]]:
    """A transport answering with handler that records every URL actually sent."""
    sent: list[str] = []

    def record(request: httpx.Request) -> httpx.Response:
        sent.append(str(request.url))
        return handler(request)

    return httpx.MockTransport(record), sent


def test_the_hosts_are_the_install_allowlist() -> None:
    shipped = {host for allowlist in load_registries().values() for host in allowlist.hosts}
    assert set(registry_hosts()) == shipped
    assert {"registry.npmjs.org", "pypi.org", "files.pythonhosted.org"} <= shipped
    assert is_registry_host("pypi.org") and not is_registry_host("evil.example") and not is_registry_host(None)


def test_an_allowlist_override_is_honoured_with_wildcards(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    override = tmp_path / "registries.json"
    override.write_text(json.dumps({"npm": {"hosts": [".mirror.example"]}}))
    monkeypatch.setenv("MCP_SANDBOX_REGISTRIES", str(override))
    assert is_registry_host("npm.mirror.example") and not is_registry_host("registry.npmjs.org")
    transport, sent = recording(lambda request: httpx.Response(200, content=b"{}"))
    with make_client(transport=transport) as client:
        assert fetch(client, "https://npm.mirror.example/x").ok
        assert not fetch(client, "https://registry.npmjs.org/x").ok
    assert sent == ["https://npm.mirror.example/x"]


def test_other_hosts_are_refused_before_anything_is_sent() -> None:
    transport, sent = recording(lambda request: httpx.Response(200, content=b"secret"))
    with make_client(transport=transport) as client:
        got = fetch(client, "https://evil.example/steal")
    assert not got.ok and got.status is None and "OffRegistryHost" in got.reason and sent == []


def test_redirects_are_followed_only_between_registry_hosts() -> None:
    def handler(request: httpx.Request) -> httpx.Response:
        if request.url.path == "/to-files":
            return httpx.Response(302, headers={"Location": "https://files.pythonhosted.org/pkg.whl"})
        if request.url.path == "/to-elsewhere":
            return httpx.Response(302, headers={"Location": "https://evil.example/pkg.whl"})
        return httpx.Response(200, content=b"wheel")

    transport, sent = recording(handler)
    with make_client(transport=transport) as client:
        assert fetch(client, "https://pypi.org/to-files").content == b"wheel"
        refused = fetch(client, "https://pypi.org/to-elsewhere")
    assert not refused.ok and "evil.example" in refused.reason
    assert sent == ["https://pypi.org/to-files", "https://files.pythonhosted.org/pkg.whl",
                    "https://pypi.org/to-elsewhere"]


def test_reads_are_bounded() -> None:
    transport, _ = recording(lambda request: httpx.Response(200, content=b"x" * 2048))
    with make_client(transport=transport) as client:
        got = fetch(client, "https://pypi.org/big", max_bytes=1024)
    assert not got.ok and got.status == 200 and "larger than 1024" in got.reason


def _ca_pem(common_name: str) -> bytes:
    key = ec.generate_private_key(ec.SECP256R1())
    name = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, common_name)])
    now = datetime.datetime.now(datetime.timezone.utc)
    cert = (x509.CertificateBuilder().subject_name(name).issuer_name(name).public_key(key.public_key())
            .serial_number(x509.random_serial_number()).not_valid_before(now)
            .not_valid_after(now + datetime.timedelta(days=1))
            .add_extension(x509.BasicConstraints(ca=True, path_length=None), critical=True)
            .sign(key, hashes.SHA256()))
    return cert.public_bytes(serialization.Encoding.PEM)


def test_the_given_ca_bundle_is_trusted_instead_of_the_system_one(tmp_path: Path) -> None:
    bundle = tmp_path / "proxy-ca.crt"
    bundle.write_bytes(_ca_pem("mcp-sandbox test intercepting proxy"))
    context = trusted_ssl_context(bundle)
    assert isinstance(context, ssl.SSLContext)
    subjects = [dict(item[0] for item in cert["subject"]) for cert in context.get_ca_certs()]
    assert subjects == [{"commonName": "mcp-sandbox test intercepting proxy"}]


def test_without_a_bundle_the_system_one_is_trusted() -> None:
    system = Path("/etc/ssl/certs/ca-certificates.crt")
    if not system.is_file():
        pytest.skip("no system CA bundle on this machine")
    context = trusted_ssl_context(None)
    assert isinstance(context, ssl.SSLContext) and context.cert_store_stats()["x509_ca"] > 0


def _npm_registry(request: httpx.Request) -> httpx.Response:
    if request.url.path == "/left-pad":
        assert request.headers["accept"] == "application/json"
        return httpx.Response(200, json={"dist-tags": {"latest": "1.3.0"}, "versions": {"1.2.0": {}, "1.3.0": {}}})
    if request.url.path == "/broken":
        return httpx.Response(503)
    return httpx.Response(404, json={"error": "Not found"})


def test_resolving_goes_through_the_registry_client() -> None:
    endpoints = RegistryEndpoints.from_environment({})
    assert set(endpoints.endpoint_hosts()) <= set(registry_hosts())  # defaults: no extra host
    assert endpoints.mirror_hosts() == ()
    transport, sent = recording(_npm_registry)
    with endpoints.client(transport=transport) as client:
        assert resolve(parse_target("npm:left-pad"), client, endpoints).version == "1.3.0"
        assert resolve(parse_target("npm:left-pad@1.2.0"), client, endpoints).version == "1.2.0"
        with pytest.raises(UsageError, match="was not found"):
            resolve(parse_target("npm:no-such-package"), client, endpoints)
        with pytest.raises(SandboxError, match="HTTP 503"):
            resolve(parse_target("npm:broken"), client, endpoints)
    assert sent[0] == "https://registry.npmjs.org/left-pad"


@pytest.mark.parametrize("document", [
    {"dist-tags": {"latest": ["1.3.0"]}, "versions": {"1.3.0": {}}},  # a tag that is not a version string
    {"dist-tags": {"latest": {"v": 1}}, "versions": {"1.3.0": {}}},  # unhashable: `in versions` raised TypeError
    {"dist-tags": ["latest"], "versions": {"1.3.0": {}}},  # dist-tags not an object: .get raised AttributeError
    {"dist-tags": {"latest": "1.3.0"}, "versions": 7},  # versions not an object: `in 7` raised TypeError
])
def test_a_mirrors_malformed_package_document_is_no_such_version_not_a_crash(document: dict) -> None:
    """A mirror (or a hostile registry) answers with a packument npm never writes: one line, exit 2, no traceback."""
    transport, _ = recording(lambda request: httpx.Response(200, json=document))
    with make_client(transport=transport) as client:
        with pytest.raises(UsageError, match="has no version or tag 'latest'"):
            resolve(parse_target("npm:left-pad"), client, RegistryEndpoints.from_environment({}))


def test_an_unreachable_registry_is_a_sandbox_error() -> None:
    def refuse(request: httpx.Request) -> httpx.Response:
        raise httpx.ConnectError("connection refused", request=request)

    with make_client(transport=httpx.MockTransport(refuse)) as client:
        with pytest.raises(SandboxError, match="cannot reach the registry .*ConnectError"):
            resolve(parse_target("pypi:mcp-server-git"), client)


@pytest.mark.parametrize("document", [
    {"info": ["1.0"], "releases": {"1.0": [{}]}},  # info not an object: .get raised AttributeError
    {"info": {"version": "1.0"}, "releases": 7},  # releases not an object: `in 7` raised TypeError
    {"info": {"version": {"v": 1}}, "releases": {"1.0": [{}]}},  # a version that is not a string
])
def test_an_indexs_malformed_project_document_is_no_such_release_not_a_crash(document: dict) -> None:
    transport, _ = recording(lambda request: httpx.Response(200, json=document))
    with make_client(transport=transport) as client:
        with pytest.raises(UsageError, match="has no release"):
            resolve(parse_target("pypi:mcp-server-time"), client)


def test_a_project_document_naming_another_project_does_not_choose_what_is_installed() -> None:
    """The index's display name is taken only when it is the project asked for (PEP 503): a mirror that names
    another project there would have had the install fetch that one."""
    def project(name: str) -> Callable[[httpx.Request], httpx.Response]:
        return lambda request: httpx.Response(200, json={"info": {"name": name, "version": "1.0"},
                                                         "releases": {"1.0": [{}]}})

    for served, resolved in (("evil-other-project", "mcp-server-time"), ("MCP_Server.Time", "MCP_Server.Time")):
        transport, _ = recording(project(served))
        with make_client(transport=transport) as client:
            assert resolve(parse_target("pypi:mcp-server-time"), client).name == resolved
