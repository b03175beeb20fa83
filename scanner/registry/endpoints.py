"""Where every registry lookup of one scan goes, in one object, and the one client built from it.

`RegistryEndpoints` holds the npm registry, the PyPI JSON and Simple APIs (the public registries, or a mirror an
operator set in MCP_SANDBOX_NPM_REGISTRY / MCP_SANDBOX_PYPI_JSON / MCP_SANDBOX_PYPI_SIMPLE), the CA bundle
(`--ca-bundle`), the upstream proxy (`--upstream-proxy`) and the hosts the client may reach: the install allowlist
(sandbox/install/proxy/registries.json), the mirror's hosts, and an advisory service only when the user opted in to
it (`--advisories osv`). Resolution, provenance, attestations and advisories all use the client it builds, so a
mirror answers every one of them, not only the version lookup.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from urllib.parse import quote, unquote, urlsplit

import httpx

from sandbox.install.proxy.allowlist import host_allowed
from sandbox.install.proxy.upstream import UpstreamProxy
from scanner.registry.client import NPM_REGISTRY, PYPI_INDEX, TIMEOUT, make_client, registry_hosts

NPM_REGISTRY_ENV = "MCP_SANDBOX_NPM_REGISTRY"
PYPI_JSON_ENV = "MCP_SANDBOX_PYPI_JSON"
PYPI_SIMPLE_ENV = "MCP_SANDBOX_PYPI_SIMPLE"
PYPI_JSON = f"{PYPI_INDEX}/pypi"
PYPI_SIMPLE = f"{PYPI_INDEX}/simple"
OSV_API_HOST = "api.osv.dev"


@dataclass(frozen=True)
class RegistryEndpoints:
    """The URLs, trust and reach of one scan's registry lookups (the defaults: the public registries)."""

    npm_registry: str = NPM_REGISTRY
    pypi_json: str = PYPI_JSON
    pypi_simple: str = PYPI_SIMPLE
    ca_bundle: Path | None = None
    upstream_proxy: UpstreamProxy | None = None
    service_hosts: tuple[str, ...] = field(default=())  # opted-in services beyond the registries (the OSV API)

    @classmethod
    def from_environment(cls, environ: Mapping[str, str] | None = None, *, ca_bundle: Path | None = None,
                         upstream_proxy: UpstreamProxy | None = None,
                         advisories: str | None = None) -> RegistryEndpoints:
        """The endpoints of a scan: the mirror variables (the Simple API defaults to the JSON API's sibling
        `/simple` when only MCP_SANDBOX_PYPI_JSON is set), the CLI's CA bundle and upstream, and the OSV API's host
        when `--advisories osv` asked for it."""
        env = os.environ if environ is None else environ
        pypi_json = _url(env.get(PYPI_JSON_ENV)) or PYPI_JSON
        pypi_simple = _url(env.get(PYPI_SIMPLE_ENV)) or (PYPI_SIMPLE if pypi_json == PYPI_JSON
                                                          else simple_beside(pypi_json))
        return cls(npm_registry=_url(env.get(NPM_REGISTRY_ENV)) or NPM_REGISTRY, pypi_json=pypi_json,
                   pypi_simple=pypi_simple, ca_bundle=ca_bundle, upstream_proxy=upstream_proxy,
                   service_hosts=(OSV_API_HOST,) if advisories == "osv" else ())

    def endpoint_hosts(self) -> tuple[str, ...]:
        """The hosts of the three endpoints (a mirror's, or the registries' own)."""
        urls = (self.npm_registry, self.pypi_json, self.pypi_simple)
        return tuple(dict.fromkeys(host for host in (urlsplit(u).hostname for u in urls) if host))

    def mirror_hosts(self) -> tuple[str, ...]:
        """The endpoint hosts the install allowlist does not already hold: what a mirror adds."""
        shipped = registry_hosts()
        return tuple(host for host in self.endpoint_hosts() if not host_allowed(host, shipped))

    def allowed_hosts(self) -> tuple[str, ...]:
        """Every host the client may reach: the install allowlist, the mirror's hosts, the opted-in services."""
        return tuple(dict.fromkeys((*registry_hosts(), *self.mirror_hosts(), *self.service_hosts)))

    def allows(self, host: str | None) -> bool:
        return bool(host) and host_allowed(str(host), self.allowed_hosts())

    def same_host(self, url: str, endpoint: str) -> bool:
        """Whether `url` is on the host of `endpoint` (e.g. a tarball on the npm registry it was listed by)."""
        return urlsplit(url).hostname == urlsplit(endpoint).hostname

    def client(self, *, transport: httpx.BaseTransport | None = None,
               timeout: httpx.Timeout | float = TIMEOUT) -> httpx.Client:
        """The scan's one registry client: these hosts only, this CA bundle, through this upstream proxy."""
        upstream = self.upstream_proxy
        return make_client(ca_bundle=self.ca_bundle, extra_hosts=(*self.mirror_hosts(), *self.service_hosts),
                           timeout=timeout, transport=transport, proxy=httpx_proxy(upstream) if upstream else None,
                           direct_hosts=upstream.no_proxy if upstream else ())

    # ------------------------------------------------------------------------------------------------ the URLs

    def npm_packument(self, name: str) -> str:
        """The package document (@scope/name → @scope%2fname)."""
        return f"{self.npm_registry.rstrip('/')}/{quote(name, safe='@')}"

    def npm_keys(self) -> str:
        return f"{self.npm_registry.rstrip('/')}/-/npm/v1/keys"

    def pypi_project(self, project: str) -> str:
        return f"{self.pypi_json.rstrip('/')}/{quote(project)}/json"

    def pypi_release(self, project: str, version: str) -> str:
        return f"{self.pypi_json.rstrip('/')}/{quote(project)}/{quote(version, safe='+!')}/json"

    def pypi_simple_page(self, project: str) -> str:
        return f"{self.pypi_simple.rstrip('/')}/{quote(project)}/"


DEFAULT_ENDPOINTS = RegistryEndpoints()


def simple_beside(pypi_json: str) -> str:
    """A mirror's Simple API when only its JSON API is given: `…/pypi` → `…/simple`, else `/simple` at its
    root."""
    base = pypi_json.rstrip("/")
    if base.endswith("/pypi"):
        return base[: -len("/pypi")] + "/simple"
    parts = urlsplit(base)
    return f"{parts.scheme}://{parts.netloc}/simple"


def httpx_proxy(upstream: UpstreamProxy) -> httpx.Proxy:
    """The upstream as an httpx proxy: the login as its auth, never in the URL (which error messages may show)."""
    host = f"[{upstream.host}]" if ":" in upstream.host else upstream.host
    auth = None
    if upstream.credentials is not None:
        user, _, password = upstream.credentials.squid_login().partition(":")
        auth = (unquote(user), unquote(password))
    return httpx.Proxy(f"http://{host}:{upstream.port}", auth=auth)


def _url(value: str | None) -> str | None:
    return value.strip().rstrip("/") or None if value else None
