"""Resolving a registry target to an exact version before anything is installed (and failing early on unknown ones):
what every ecosystem's `resolve` shares (scanner.ecosystems dispatches to them)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import httpx

from sandbox.core.errors import SandboxError
from scanner.errors import UsageError
from scanner.registry.client import fetch


@dataclass(frozen=True)
class Resolved:
    name: str
    version: str


def registry_document(client: httpx.Client, url: str, what: str, not_found: str) -> dict[str, Any]:
    """The JSON document at url (bounded read); a 404 (or an answer that is no JSON object) is the user's error
    `not_found`, any other failure the registry's."""
    got = fetch(client, url, accept="application/json")
    if got.status == 404:
        raise UsageError(not_found)
    if got.status is None:
        raise SandboxError(f"cannot reach the registry for {what} ({got.reason})")
    if got.status != 200:
        raise SandboxError(f"the registry answered HTTP {got.status} for {what}")
    if not got.ok:
        raise SandboxError(f"the registry's answer for {what} was not read: {got.reason}")
    try:
        data = got.json()
    except ValueError as exc:
        raise SandboxError(f"the registry sent invalid JSON for {what}") from exc
    if not isinstance(data, dict):
        raise UsageError(not_found)
    return data


def document_field(document: dict[str, Any], key: str) -> dict[str, Any]:
    """A field of a registry document that must be an object (npm's versions and dist-tags, PyPI's info and
    releases): the registry's or a mirror's text, so any other shape reads as empty (no such version), never as a
    TypeError further on."""
    value = document.get(key)
    return value if isinstance(value, dict) else {}


def no_such_version(what: str, wanted: str, latest: Any, versions: dict[str, Any]) -> UsageError:
    """The one-line error for a version (or tag) the registry does not have, with the latest and recent ones."""
    recent = ", ".join(list(versions)[-5:]) or "none"
    return UsageError(f"{what} has no {wanted}; latest is {latest} (recent: {recent})")
