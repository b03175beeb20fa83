"""Resolve a registry target to an exact version before anything is installed (and fail early on unknown ones)."""

from __future__ import annotations

import json
import os
from dataclasses import dataclass
from urllib.parse import quote, urlsplit

import httpx

from sandbox.core.errors import SandboxError
from scanner.errors import UsageError
from scanner.registry.client import NPM_REGISTRY as DEFAULT_NPM_REGISTRY
from scanner.registry.client import PYPI_INDEX, fetch
from scanner.pipeline.targets import Target

NPM_REGISTRY = os.environ.get("MCP_SANDBOX_NPM_REGISTRY", DEFAULT_NPM_REGISTRY)
PYPI_JSON = os.environ.get("MCP_SANDBOX_PYPI_JSON", f"{PYPI_INDEX}/pypi")


@dataclass(frozen=True)
class Resolved:
    name: str
    version: str


def endpoint_hosts() -> tuple[str, ...]:
    """The hosts resolution asks: the registries, or the endpoints an operator set in MCP_SANDBOX_NPM_REGISTRY /
    MCP_SANDBOX_PYPI_JSON (a mirror), which the registry client must then also reach."""
    return tuple(host for host in (urlsplit(NPM_REGISTRY).hostname, urlsplit(PYPI_JSON).hostname) if host)


def resolve(target: Target, client: httpx.Client) -> Resolved:
    if target.ecosystem == "npm":
        return _resolve_npm(target, client)
    return _resolve_pypi(target, client)


def _get_json(client: httpx.Client, url: str, what: str) -> dict | None:
    """The JSON document at url (bounded read), None when the registry says 404; anything else is an error."""
    got = fetch(client, url, accept="application/json")
    if got.status == 404:
        return None
    if got.status is None:
        raise SandboxError(f"cannot reach the registry for {what} ({got.reason})")
    if got.status != 200:
        raise SandboxError(f"the registry answered HTTP {got.status} for {what}")
    if not got.ok:
        raise SandboxError(f"the registry's answer for {what} was not read: {got.reason}")
    try:
        data = json.loads(got.content)
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
