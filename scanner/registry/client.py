"""The scanner's one registry HTTP client, for resolving a target (scanner.registry.resolve), the provenance checks,
attestations and advisories; `scanner.registry.endpoints` says where each lookup goes and builds it once per scan.

- Trust: the CA bundle the user passed (`--ca-bundle`), else the system bundle (a TLS-intercepting proxy's CA is
  there), else httpx's default.
- Reach: only the registry hosts of sandbox/install/proxy/registries.json (or its MCP_SANDBOX_REGISTRIES override), the
  same list the install proxy allows, so the host and the sandbox cannot drift apart, plus the hosts the endpoints add
  (a mirror, an opted-in advisory service); redirects are checked hop by hop.
- Reads: bounded; `fetch` turns failures into "unavailable" reasons, not errors.
"""

from __future__ import annotations

import json
import ssl
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

import httpx

from sandbox.install.proxy.allowlist import host_allowed, load_registries

SYSTEM_CA_BUNDLE = Path("/etc/ssl/certs/ca-certificates.crt")
NPM_REGISTRY = "https://registry.npmjs.org"
PYPI_INDEX = "https://pypi.org"
MAX_METADATA_BYTES = 64 * 1024 * 1024
MAX_ARTIFACT_BYTES = 256 * 1024 * 1024
MAX_REDIRECTS = 5
TIMEOUT = httpx.Timeout(30.0, connect=10.0)
USER_AGENT = "mcp-sandbox"


class OffRegistryHost(httpx.RequestError):
    """A request (or a redirect hop) to a host that is not a registry host; raised before anything is sent."""


@dataclass(frozen=True)
class Fetched:
    """The result of one GET: content when ok, otherwise why not (HTTP status or network error)."""

    url: str
    ok: bool
    status: int | None = None
    content: bytes = b""
    reason: str = ""

    def json(self) -> Any:
        """The content parsed as JSON; ValueError when it is not JSON (or not UTF-8), or is nested past the parser's
        depth (json raises RecursionError there: a registry or mirror answer is read as "not JSON", never a crash)."""
        try:
            return json.loads(self.content)
        except RecursionError:
            raise ValueError("JSON nested too deep") from None

    def json_object(self) -> dict[str, Any] | None:
        """The content as a JSON object, or None when the GET failed or the content is not one."""
        if not self.ok:
            return None
        try:
            data = self.json()
        except ValueError:
            return None
        return data if isinstance(data, dict) else None


def registry_hosts() -> tuple[str, ...]:
    """Every ecosystem's registry hosts from the install allowlist, read at call time (the override may change)."""
    hosts = (host for allowlist in load_registries().values() for host in allowlist.hosts)
    return tuple(dict.fromkeys(hosts))


def is_registry_host(host: str | None, extra_hosts: Iterable[str] = ()) -> bool:
    """Whether `host` is a registry host (`.domain` entries cover subdomains) or one of `extra_hosts`."""
    return bool(host) and host_allowed(str(host), (*registry_hosts(), *extra_hosts))


def trusted_ssl_context(ca_bundle: Path | None = None) -> ssl.SSLContext | bool:
    """The given bundle, else the system bundle when present, else True (httpx's default trust store)."""
    bundle = ca_bundle or (SYSTEM_CA_BUNDLE if SYSTEM_CA_BUNDLE.is_file() else None)
    return ssl.create_default_context(cafile=str(bundle)) if bundle else True


def make_client(*, ca_bundle: Path | None = None, extra_hosts: Iterable[str] = (),
                timeout: httpx.Timeout | float = TIMEOUT, transport: httpx.BaseTransport | None = None,
                proxy: httpx.Proxy | None = None, direct_hosts: Iterable[str] = ()) -> httpx.Client:
    """A client that only talks to the registry hosts (plus `extra_hosts`, e.g. an operator-configured mirror),
    redirects included, and trusts `ca_bundle` or the system CA bundle. `proxy`: the upstream proxy to go through
    (None: httpx reads the environment's proxy variables), except for `direct_hosts` (its NO_PROXY entries).
    `transport` replaces the network (tests)."""
    allowed = (*registry_hosts(), *extra_hosts)

    def only_registries(request: httpx.Request) -> None:
        if not host_allowed(request.url.host, allowed):
            raise OffRegistryHost(f"host {request.url.host} is not a registry host", request=request)

    verify = trusted_ssl_context(ca_bundle)
    mounts: dict[str, httpx.BaseTransport | None] | None = None
    if proxy is not None and transport is None:
        mounts = {"all://": httpx.HTTPTransport(proxy=proxy, verify=verify)}
        mounts.update({_mount_pattern(host): None for host in direct_hosts})
    return httpx.Client(timeout=timeout, verify=verify, follow_redirects=True,
                        max_redirects=MAX_REDIRECTS, headers={"User-Agent": USER_AGENT},
                        event_hooks={"request": [only_registries]}, transport=transport, mounts=mounts)


def _mount_pattern(no_proxy_entry: str) -> str:
    """A NO_PROXY entry (`host`, `.domain`, `*.domain`) as an httpx mount pattern."""
    host = no_proxy_entry.lstrip("*")
    return f"all://*{host}" if host.startswith(".") else f"all://{host}"


def fetch(client: httpx.Client, url: str, *, accept: str | None = None,
          max_bytes: int = MAX_METADATA_BYTES) -> Fetched:
    """GET url; any network error, non-200 status or oversize body becomes a Fetched with ok=False and a reason."""
    headers = {"Accept": accept} if accept else {}
    try:
        with client.stream("GET", url, headers=headers) as response:
            if response.status_code != 200:
                return Fetched(url, False, response.status_code, reason=f"HTTP {response.status_code} from "
                                                                        f"{urlsplit(url).netloc}")
            chunks: list[bytes] = []
            size = 0
            for chunk in response.iter_bytes():
                size += len(chunk)
                if size > max_bytes:
                    return Fetched(url, False, 200, reason=f"response larger than {max_bytes} bytes")
                chunks.append(chunk)
            return Fetched(url, True, 200, b"".join(chunks))
    except httpx.HTTPError as exc:
        return Fetched(url, False, None, reason=f"{exc.__class__.__name__}: {str(exc)[:200]}")
