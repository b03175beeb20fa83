"""The registry HTTP client: system CA bundle, bounded reads, and failures as "unavailable" reasons, not errors."""

from __future__ import annotations

import ssl
from dataclasses import dataclass
from pathlib import Path
from urllib.parse import urlsplit

import httpx

SYSTEM_CA_BUNDLE = Path("/etc/ssl/certs/ca-certificates.crt")
NPM_REGISTRY = "https://registry.npmjs.org"
PYPI_INDEX = "https://pypi.org"
REGISTRY_HOSTS = frozenset({"registry.npmjs.org", "pypi.org", "files.pythonhosted.org"})
MAX_METADATA_BYTES = 64 * 1024 * 1024
MAX_ARTIFACT_BYTES = 256 * 1024 * 1024


@dataclass(frozen=True)
class Fetched:
    """The result of one GET: content when ok, otherwise why not (HTTP status or network error)."""

    url: str
    ok: bool
    status: int | None = None
    content: bytes = b""
    reason: str = ""


def make_client(timeout: float = 30.0, allowed_hosts: frozenset[str] = REGISTRY_HOSTS) -> httpx.Client:
    """A client that trusts the system CA bundle (the TLS-intercepting proxy's CA is there) and only talks to the
    registry hosts, redirects included."""
    verify: ssl.SSLContext | bool = True
    if SYSTEM_CA_BUNDLE.is_file():
        verify = ssl.create_default_context(cafile=str(SYSTEM_CA_BUNDLE))

    def only_registries(request: httpx.Request) -> None:
        if request.url.host not in allowed_hosts:
            raise httpx.UnsupportedProtocol(f"host {request.url.host} is not a configured registry host")

    return httpx.Client(timeout=timeout, verify=verify, follow_redirects=True,
                        headers={"User-Agent": "mcp-sandbox-provenance"},
                        event_hooks={"request": [only_registries]})


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
