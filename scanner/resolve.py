"""Resolve a registry target to an exact version before anything is installed (and fail early on unknown ones)."""

from __future__ import annotations

import os
import ssl
from dataclasses import dataclass
from pathlib import Path
from urllib.parse import quote

import httpx

from sandbox.errors import SandboxError
from scanner.errors import UsageError
from scanner.targets import Target

NPM_REGISTRY = os.environ.get("MCP_SANDBOX_NPM_REGISTRY", "https://registry.npmjs.org")
PYPI_JSON = os.environ.get("MCP_SANDBOX_PYPI_JSON", "https://pypi.org/pypi")
DEFAULT_CA_BUNDLE = Path("/etc/ssl/certs/ca-certificates.crt")
TIMEOUT = httpx.Timeout(20.0, connect=10.0)


@dataclass(frozen=True)
class Resolved:
    name: str
    version: str


def http_client(ca_bundle: Path | None) -> httpx.Client:
    """An HTTP client that trusts the given CA bundle (corporate TLS interception), else the system's."""
    bundle = ca_bundle or (DEFAULT_CA_BUNDLE if DEFAULT_CA_BUNDLE.is_file() else None)
    verify: ssl.SSLContext | bool = ssl.create_default_context(cafile=str(bundle)) if bundle else True
    return httpx.Client(timeout=TIMEOUT, verify=verify, follow_redirects=True,
                        headers={"User-Agent": "mcp-sandbox", "Accept": "application/json"})


def resolve(target: Target, client: httpx.Client) -> Resolved:
    if target.ecosystem == "npm":
        return _resolve_npm(target, client)
    return _resolve_pypi(target, client)


def _get_json(client: httpx.Client, url: str, what: str) -> dict | None:
    try:
        response = client.get(url)
    except httpx.HTTPError as exc:
        raise SandboxError(f"cannot reach the registry for {what} ({type(exc).__name__}: {exc})") from exc
    if response.status_code == 404:
        return None
    if response.status_code != 200:
        raise SandboxError(f"the registry answered HTTP {response.status_code} for {what}")
    try:
        data = response.json()
    except ValueError as exc:
        raise SandboxError(f"the registry sent invalid JSON for {what}") from exc
    return data if isinstance(data, dict) else None


def _resolve_npm(target: Target, client: httpx.Client) -> Resolved:
    packument = _get_json(client, f"{NPM_REGISTRY}/{quote(target.name, safe='@')}", f"npm package {target.name}")
    if packument is None:
        raise UsageError(f"npm package {target.name!r} was not found on the registry; check the name")
    versions = packument.get("versions") or {}
    tags = packument.get("dist-tags") or {}
    wanted = target.version_spec or "latest"
    version = tags.get(wanted, wanted)
    if version not in versions:
        recent = ", ".join(list(versions)[-5:]) or "none"
        raise UsageError(
            f"npm package {target.name} has no version or tag {wanted!r}; latest is {tags.get('latest', '?')} "
            f"(recent: {recent})"
        )
    return Resolved(target.name, str(version))


def _resolve_pypi(target: Target, client: httpx.Client) -> Resolved:
    project = _get_json(client, f"{PYPI_JSON}/{quote(target.name)}/json", f"PyPI project {target.name}")
    if project is None:
        raise UsageError(f"PyPI project {target.name!r} was not found; check the name")
    info = project.get("info") or {}
    releases = project.get("releases") or {}
    version = target.version_spec or str(info.get("version") or "")
    if version not in releases or not releases[version]:
        recent = ", ".join(list(releases)[-5:]) or "none"
        raise UsageError(
            f"PyPI project {target.name} has no release {version!r} with files; latest is {info.get('version')} "
            f"(recent: {recent})"
        )
    return Resolved(str(info.get("name") or target.name), version)
