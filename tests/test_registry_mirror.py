"""A registry mirror (MCP_SANDBOX_NPM_REGISTRY / MCP_SANDBOX_PYPI_JSON) answers every lookup of a scan: resolution,
provenance, the tarball and the attestations, not only the version. The mirror is a real HTTP server on loopback that
records what it was asked; the shipped registries are replaced by a host that does not exist, so a lookup that still
went to them is refused before anything is sent (nothing leaves this machine). Signed data is the vendored REAL
registry data of tests/fixtures/provenance (a mirror rewrites tarball and attestation URLs to itself)."""

from __future__ import annotations

import base64
import json
import re
import threading
from collections.abc import Iterator
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import httpx
import pytest

from sandbox.core.errors import UserInputError
from sandbox.install.container import _install_environment, installed_tag
from sandbox.install.installers import install_allowlist
from sandbox.install.proxy.allowlist import registry_hosts
from sandbox.install.proxy.upstream import Credentials, UpstreamProxy
from sandbox.install.request import InstallRequest
from scanner.ecosystems.registry import ecosystem, resolve
from scanner.pipeline.scan import ScanOptions
from scanner.pipeline.targets import parse_target
from scanner.provenance.advisories import OsvApi, check_advisories
from scanner.provenance.installed import check_installed
from scanner.registry.client import fetch
from scanner.registry.endpoints import OSV_API_HOST, RegistryEndpoints, simple_beside

FIXTURES = Path(__file__).parent / "fixtures" / "provenance"
PW_DOC = json.loads((FIXTURES / "npm" / "playwright-cli-0.1.1.packument.json").read_text())
PW_TGZ = (FIXTURES / "npm" / "playwright-cli-0.1.1.tgz").read_bytes()
PW_ATTESTATIONS = (FIXTURES / "npm" / "playwright-cli-0.1.1.attestations.json").read_bytes()
GCB_FILE = "gcb_attestation_test-0.0.0.tar.gz"
GCB_SHA256 = "461317362419124b6012e855423a9078d6de8aed3e74fa78cc74d669b23dc6cf"
GCB_PROVENANCE = (FIXTURES / "pypi" / f"{GCB_FILE}.provenance").read_bytes()
PROXY_VARIABLES = ("HTTPS_PROXY", "https_proxy", "HTTP_PROXY", "http_proxy", "ALL_PROXY", "all_proxy")


@dataclass
class Stub:
    """A loopback HTTP server answering `routes` (path → body) and recording every request line's target."""

    routes: dict[str, bytes] = field(default_factory=dict)
    asked: list[str] = field(default_factory=list)
    headers: list[dict[str, str]] = field(default_factory=list)
    base: str = ""


@pytest.fixture
def stub() -> Iterator[Stub]:
    state = Stub()

    class Handler(BaseHTTPRequestHandler):
        def do_GET(self) -> None:  # noqa: N802 (http.server's name)
            state.asked.append(self.path)
            state.headers.append(dict(self.headers))
            body = state.routes.get(self.path)
            self.send_response(200 if body is not None else 404)
            self.send_header("Content-Length", str(len(body or b"")))
            self.end_headers()
            self.wfile.write(body or b"")

        def log_message(self, *args: Any) -> None:
            pass

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    state.base = f"http://127.0.0.1:{server.server_address[1]}"
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield state
    finally:
        server.shutdown()
        server.server_close()


@pytest.fixture
def mirrored(stub: Stub, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> RegistryEndpoints:
    """The stub as the operator's npm and PyPI mirror; the shipped registries replaced by a host that cannot exist."""
    allowlist = tmp_path / "registries.json"
    allowlist.write_text(json.dumps({"npm": {"hosts": ["registry.invalid"]}, "pypi": {"hosts": ["pypi.invalid"]}}))
    monkeypatch.setenv("MCP_SANDBOX_REGISTRIES", str(allowlist))
    monkeypatch.setenv("MCP_SANDBOX_NPM_REGISTRY", stub.base)
    monkeypatch.setenv("MCP_SANDBOX_PYPI_JSON", f"{stub.base}/pypi")
    monkeypatch.delenv("MCP_SANDBOX_PYPI_SIMPLE", raising=False)
    for name in PROXY_VARIABLES:
        monkeypatch.delenv(name, raising=False)
    return ScanOptions(target="unused").registry_endpoints()


def _npm_mirror(stub: Stub) -> None:
    doc = json.loads(json.dumps(PW_DOC).replace("https://registry.npmjs.org", stub.base))
    stub.routes.update({"/@playwright%2Fcli": json.dumps(doc).encode(),
                        "/@playwright/cli/-/cli-0.1.1.tgz": PW_TGZ,
                        "/-/npm/v1/attestations/@playwright%2fcli@0.1.1": PW_ATTESTATIONS})


def _pypi_mirror(stub: Stub) -> None:
    file_url = f"{stub.base}/packages/xx/{GCB_FILE}"
    provenance = f"{stub.base}/integrity/gcb-attestation-test/0.0.0/{GCB_FILE}/provenance"
    files = [{"filename": GCB_FILE, "packagetype": "sdist", "digests": {"sha256": GCB_SHA256}, "url": file_url,
              "yanked": False}]
    release = {"info": {"name": "gcb-attestation-test", "version": "0.0.0", "yanked": False}, "urls": files}
    project = {"info": release["info"], "releases": {"0.0.0": files}}
    simple = {"meta": {"api-version": "1.1"}, "name": "gcb-attestation-test",
              "files": [{"filename": GCB_FILE, "url": file_url, "hashes": {"sha256": GCB_SHA256},
                         "provenance": provenance}]}
    stub.routes.update({"/pypi/gcb-attestation-test/json": json.dumps(project).encode(),
                        "/pypi/gcb-attestation-test/0.0.0/json": json.dumps(release).encode(),
                        "/simple/gcb-attestation-test/": json.dumps(simple).encode(),
                        f"/integrity/gcb-attestation-test/0.0.0/{GCB_FILE}/provenance": GCB_PROVENANCE})


def scan_lookups(target: str, endpoints: RegistryEndpoints) -> tuple[str, dict[str, str]]:
    """What a scan asks the registry about `target` (resolve it, then check what was installed): the resolved
    version and each provenance check's outcome."""
    parsed = parse_target(target)
    with endpoints.client() as client:
        resolved = resolve(parsed, client, endpoints)
        report, _ = check_installed(parsed.ecosystem, resolved.name, resolved.version, local=False, manifest=None,
                                    client=client, endpoints=endpoints)
    return resolved.version, {c.name: c.outcome for c in report.packages[0].checks}


def test_npm_resolution_provenance_tarball_and_attestations_all_ask_the_mirror(
        stub: Stub, mirrored: RegistryEndpoints) -> None:
    _npm_mirror(stub)
    version, checks = scan_lookups("npm:@playwright/cli@0.1.1", mirrored)
    assert version == "0.1.1"
    assert stub.asked == ["/@playwright%2Fcli",  # resolution
                          "/@playwright%2Fcli", "/@playwright/cli/-/cli-0.1.1.tgz",  # provenance
                          "/-/npm/v1/attestations/@playwright%2fcli@0.1.1"]  # attestations
    # The tarball's bytes and the attestations came from the mirror and verify (the vendored packument carries no
    # dist.signatures, so I3 is "not checked" here, as anywhere they are stripped).
    assert checks["integrity"] == checks["attestation"] == "verified", checks


def test_pypi_resolution_provenance_and_pep740_all_ask_the_mirror(stub: Stub, mirrored: RegistryEndpoints) -> None:
    _pypi_mirror(stub)
    assert mirrored.pypi_simple == f"{stub.base}/simple"  # beside the JSON API when only that is set
    version, checks = scan_lookups("pypi:gcb-attestation-test", mirrored)
    assert version == "0.0.0"
    assert stub.asked == ["/pypi/gcb-attestation-test/json",  # resolution
                          "/pypi/gcb-attestation-test/0.0.0/json", "/simple/gcb-attestation-test/",  # provenance
                          f"/packages/xx/{GCB_FILE}",  # the file, for its hash (the stub has no bytes for it)
                          f"/integrity/gcb-attestation-test/0.0.0/{GCB_FILE}/provenance"]  # PEP 740
    assert checks["index-hashes"] == checks["attestation"] == "verified", checks
    assert checks["file-hashes"] == "unavailable", checks


def test_the_shipped_registries_stay_the_default_and_a_mirror_only_adds_its_host(stub: Stub) -> None:
    default = RegistryEndpoints.from_environment({})
    assert default.mirror_hosts() == () and not default.allows("127.0.0.1")
    assert default.allows("registry.npmjs.org") and default.allows("files.pythonhosted.org")
    mirror = RegistryEndpoints.from_environment({"MCP_SANDBOX_NPM_REGISTRY": f"{stub.base}/"})
    assert mirror.npm_registry == stub.base and mirror.mirror_hosts() == ("127.0.0.1",)
    assert mirror.allows("127.0.0.1") and mirror.allows("pypi.org") and not mirror.allows("evil.example")
    assert simple_beside("https://mirror.example/repository/pypi") == "https://mirror.example/repository/simple"
    assert simple_beside("https://mirror.example/api/json") == "https://mirror.example/simple"


def test_the_osv_api_is_reached_only_when_asked_for_and_through_the_scan_client() -> None:
    sent: list[str] = []

    def osv(request: httpx.Request) -> httpx.Response:
        sent.append(str(request.url))
        return httpx.Response(200, json={"vulns": []})

    transport = httpx.MockTransport(osv)
    without = RegistryEndpoints.from_environment({})
    assert not without.allows(OSV_API_HOST)
    with without.client(transport=transport) as client:
        check, _ = check_advisories(OsvApi(client), "npm", "left-pad", "1.3.0")
    assert check.outcome == "unavailable" and sent == []  # refused before anything was sent
    opted_in = ScanOptions(target="unused", advisories="osv").registry_endpoints()
    assert opted_in.allows(OSV_API_HOST)
    with opted_in.client(transport=transport) as client:
        check, _ = check_advisories(OsvApi(client), "npm", "left-pad", "1.3.0")
    assert check.outcome == "verified" and sent == ["https://api.osv.dev/v1/query"]


def test_the_upstream_proxy_carries_the_lookups_with_its_login(stub: Stub) -> None:
    """The stub plays the upstream proxy: a plain-HTTP proxy is sent the absolute URL and the login."""
    port = int(stub.base.rsplit(":", 1)[1])
    upstream = UpstreamProxy(host="127.0.0.1", port=port, credentials=Credentials("scan ner", "p@ss:word"))
    endpoints = RegistryEndpoints(npm_registry="http://npm-mirror.invalid", upstream_proxy=upstream)
    stub.routes["http://npm-mirror.invalid/left-pad"] = b"{}"
    with endpoints.client() as client:
        got = fetch(client, endpoints.npm_packument("left-pad"))
    assert got.ok and got.json() == {}
    assert stub.asked == ["http://npm-mirror.invalid/left-pad"]
    login = base64.b64encode(b"scan ner:p@ss:word").decode()
    assert stub.headers[0].get("Proxy-Authorization") == f"Basic {login}"


# ------------------------------------------------------------------------------------------- the install and a mirror

def test_the_install_is_pointed_at_the_mirror_and_its_proxy_allows_the_mirror() -> None:
    mirror = RegistryEndpoints.from_environment({"MCP_SANDBOX_NPM_REGISTRY": "https://npm.mirror.example/npm",
                                                 "MCP_SANDBOX_PYPI_JSON": "https://pypi.mirror.example/pypi"})
    npm, pypi = ecosystem("npm"), ecosystem("pypi")
    assert npm.install_index(mirror) == "https://npm.mirror.example/npm"
    assert pypi.install_index(mirror) == "https://pypi.mirror.example/simple"
    request = InstallRequest("npm", "left-pad@1.3.0", "left-pad", "npm:left-pad@1.3.0",
                             index_url=npm.install_index(mirror))
    allow = install_allowlist(request)
    assert allow.hosts == (*registry_hosts("npm").hosts, "npm.mirror.example") and allow.ports == (443,)
    assert _install_environment(request, {})["NPM_CONFIG_REGISTRY"] == "https://npm.mirror.example/npm"
    python = InstallRequest("pypi", "x==1", "x", "pypi:x@1", index_url=pypi.install_index(mirror))
    assert _install_environment(python, {})["UV_DEFAULT_INDEX"] == "https://pypi.mirror.example/simple"
    assert "pypi.mirror.example" in install_allowlist(python).hosts


def test_without_a_mirror_the_install_is_as_before() -> None:
    default = RegistryEndpoints.from_environment({})
    assert ecosystem("npm").install_index(default) is None and ecosystem("pypi").install_index(default) is None
    for name in ("npm", "pypi"):
        request = InstallRequest(name, "x", "x", "x")  # type: ignore[arg-type]
        assert install_allowlist(request) == registry_hosts(name)
        environment = _install_environment(request, {})
        assert "NPM_CONFIG_REGISTRY" not in environment and "UV_DEFAULT_INDEX" not in environment


@pytest.mark.parametrize("url", ["http://127.0.0.1:4873", "http://localhost:4873", "https://10.0.0.8/simple"])
def test_a_mirror_the_install_cannot_reach_by_name_is_refused_with_what_to_do(url: str) -> None:
    with pytest.raises(UserInputError, match="registry mirror .*(host name|loopback)"):
        install_allowlist(InstallRequest("npm", "x", "x", "x", index_url=url))


@pytest.mark.parametrize(("url", "says"), [
    ("https://ci:s3cret@npm.mirror.example/", "carries a user name or password"),
    ("https://.mirror.example/", "cannot start with a dot"),
    ("https://npm.mirror.example:8443/", "port 443 (https) or 80 (http), not 8443"),
])
def test_a_mirror_that_would_leak_or_widen_the_install_proxy_is_refused(url: str, says: str) -> None:
    """Credentials would sit in the install container's environment for every install script; another port would
    be opened on every allowlisted registry host too."""
    with pytest.raises(UserInputError, match=re.escape(says)) as refused:
        install_allowlist(InstallRequest("npm", "x", "x", "x", index_url=url))
    assert "s3cret" not in str(refused.value)


def test_an_install_from_a_mirror_is_cached_apart_from_one_from_the_registry() -> None:
    plain = InstallRequest("npm", "x@1", "x", "npm:x@1")
    mirrored = InstallRequest("npm", "x@1", "x", "npm:x@1", index_url="https://npm.mirror.example/")
    assert installed_tag("sha256:runtime", plain) != installed_tag("sha256:runtime", mirrored)
    assert installed_tag("sha256:runtime", plain) == installed_tag("sha256:runtime", InstallRequest(
        "npm", "x@1", "x", "npm:x@1"))


def test_packages_the_install_took_from_the_mirror_are_registry_packages_not_urls() -> None:
    lock = {"packages": {"": {"name": "root"}, "node_modules/left-pad": {
        "version": "1.3.0", "resolved": "https://npm.mirror.example/left-pad/-/left-pad-1.3.0.tgz"}}}
    mirror = RegistryEndpoints.from_environment({"MCP_SANDBOX_NPM_REGISTRY": "https://npm.mirror.example"})
    mirrored_tree = ecosystem("npm").dependency_tree(lock, mirror)
    public_tree = ecosystem("npm").dependency_tree(lock, RegistryEndpoints())
    assert mirrored_tree is not None and [d.source for d in mirrored_tree.dependencies] == ["registry"]
    assert public_tree is not None and [d.source for d in public_tree.dependencies] == ["url"]  # as before


def test_hosts_the_upstreams_no_proxy_names_are_reached_directly(stub: Stub) -> None:
    """NO_PROXY holds the mirror: it is asked directly, though the upstream (a port nothing listens on) is set."""
    unused = ThreadingHTTPServer(("127.0.0.1", 0), BaseHTTPRequestHandler)
    dead_port = unused.server_address[1]
    unused.server_close()
    upstream = UpstreamProxy(host="127.0.0.1", port=dead_port, no_proxy=("127.0.0.1",))
    endpoints = RegistryEndpoints(npm_registry=stub.base, upstream_proxy=upstream)
    stub.routes["/left-pad"] = b"{}"
    with endpoints.client() as client:
        assert fetch(client, endpoints.npm_packument("left-pad")).ok
    assert stub.asked == ["/left-pad"]
