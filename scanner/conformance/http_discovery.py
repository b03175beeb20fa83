"""The GET lookups of the HTTP-only checks, on the endpoint's own origin only (a remote target's rules: the user named
one origin, and its headers go nowhere else):

- OAuth metadata: the protected-resource metadata (RFC 9728: the path-inserted well-known URI, then the root one),
  then the authorization server's (RFC 8414 and OpenID Connect discovery, in the order the specification gives) for
  each issuer it names that is on the same origin; with no protected-resource metadata, the origin's own (the
  2025-03-26 layout). An issuer on another origin is not contacted, and the note says so.
- The legacy HTTP+SSE transport: a GET with `Accept: text/event-stream` on the endpoint (what the specification's
  backward-compatible client sends) and on the `sse` path beside it (the old transport's usual home), read until the
  first event, at most SNIFF_SECONDS and MAX_SNIFF_BYTES, then closed.

Redirects are followed only within the origin (the SDK's rule). Places are described, never printed as URLs (the
endpoint's path may carry what the URL hides)."""

from __future__ import annotations

import json
from typing import Any

import anyio
import httpx2
from mcp.shared._httpx_utils import stream_within_origin

from scanner.conformance.http_wire import sse_events
from scanner.conformance.model import HttpObserved, Metadata, SseSniff

MAX_METADATA_BYTES = 256 * 1024
MAX_SNIFF_BYTES = 64 * 1024
SNIFF_SECONDS = 3.0
RESOURCE_SUFFIX = "/.well-known/oauth-protected-resource"
AS_SUFFIXES = ("/.well-known/oauth-authorization-server", "/.well-known/openid-configuration")


def _origin(url: httpx2.URL) -> tuple[str, str, int | None]:
    return url.scheme, url.host, url.port


async def get_json(client: httpx2.AsyncClient, url: httpx2.URL, timeout: float) -> dict[str, Any] | None:
    """A JSON object served at `url` with 200, else None (bounded, same-origin redirects only)."""
    with anyio.move_on_after(timeout):
        try:
            async with stream_within_origin(client, "GET", url, headers={"Accept": "application/json"}) as response:
                if response.status_code != 200:
                    return None
                body = b""
                async for chunk in response.aiter_bytes():
                    body += chunk
                    if len(body) > MAX_METADATA_BYTES:
                        return None
            document = json.loads(body)
        except (httpx2.HTTPError, ValueError, RecursionError):
            return None
        return document if isinstance(document, dict) else None
    return None


def _path_inserted(origin: httpx2.URL, suffix: str, path: str) -> httpx2.URL:
    return origin.copy_with(path=suffix + (path.rstrip("/") if path not in ("", "/") else ""), query=None,
                            fragment=None)


def issuer_urls(issuer: httpx2.URL) -> list[tuple[httpx2.URL, str]]:
    """The authorization-server metadata URLs of an issuer, in the specification's order, each with its description."""
    path = issuer.path.rstrip("/")
    bare = issuer.copy_with(path="/", query=None, fragment=None)
    if not path:
        return [(bare.copy_with(path=suffix), f"the origin's {suffix}") for suffix in AS_SUFFIXES]
    return [(_path_inserted(bare, AS_SUFFIXES[0], path), f"{AS_SUFFIXES[0]} (path-inserted)"),
            (_path_inserted(bare, AS_SUFFIXES[1], path), f"{AS_SUFFIXES[1]} (path-inserted)"),
            (issuer.copy_with(path=path + AS_SUFFIXES[1], query=None, fragment=None),
             f"{AS_SUFFIXES[1]} (appended to the issuer's path)")]


async def discover_auth(client: httpx2.AsyncClient, endpoint: httpx2.URL, timeout: float, out: HttpObserved) -> None:
    """Fill `out.resource_metadata`, `out.auth_server` and `out.auth_notes`."""
    bare = endpoint.copy_with(path="/", query=None, fragment=None)
    places = [(_path_inserted(bare, RESOURCE_SUFFIX, endpoint.path), f"{RESOURCE_SUFFIX} (path-inserted)"),
              (bare.copy_with(path=RESOURCE_SUFFIX), f"the origin's {RESOURCE_SUFFIX}")]
    for url, where in places[:1] if str(places[0][0]) == str(places[1][0]) else places:
        if (document := await get_json(client, url, timeout)) is not None:
            out.resource_metadata = Metadata(where=where, document=document)
            break
    candidates = [bare.copy_with(path="/")]
    if out.resource_metadata is not None:
        candidates = _issuers(out.resource_metadata.document, endpoint, out.auth_notes)
    for issuer in candidates:
        for url, where in issuer_urls(issuer):
            if (document := await get_json(client, url, timeout)) is not None:
                out.auth_server = Metadata(where=where, document=document)
                return
    if out.resource_metadata is None:
        out.auth_notes.append("no OAuth metadata on the endpoint's origin (the server may not use OAuth)")
    elif candidates:
        out.auth_notes.append("no authorization-server metadata at the issuer's well-known URIs on this origin")


def _issuers(document: dict[str, Any], endpoint: httpx2.URL, notes: list[str]) -> list[httpx2.URL]:
    named = document.get("authorization_servers")
    if not isinstance(named, list) or not named:
        notes.append("the protected-resource metadata names no authorization_servers")
        return []
    same: list[httpx2.URL] = []
    foreign = 0
    for value in named[:8]:
        try:
            url = httpx2.URL(value) if isinstance(value, str) else None
        except (httpx2.InvalidURL, ValueError):
            url = None
        if url is not None and _origin(url) == _origin(endpoint):
            same.append(url)
        else:
            foreign += 1
    if foreign:
        notes.append(f"{foreign} authorization server(s) on another origin (or not a URL): not contacted, since a "
                     "remote scan talks to the endpoint's origin only")
    return same


async def sniff_legacy_sse(client: httpx2.AsyncClient, endpoint: httpx2.URL, out: HttpObserved) -> None:
    """GET the endpoint, and the `sse` path beside it, as a legacy HTTP+SSE client would."""
    places = [(endpoint, "the endpoint")]
    parent = endpoint.path.rsplit("/", 1)[0]
    if not endpoint.path.rstrip("/").endswith("/sse"):
        places.append((endpoint.copy_with(path=f"{parent}/sse", query=None), "the sse path beside the endpoint"))
    for url, where in places:
        out.sniffs.append(await _sniff(client, url, where))


async def _sniff(client: httpx2.AsyncClient, url: httpx2.URL, where: str) -> SseSniff:
    sniff = SseSniff(where=where, error=f"no response within {SNIFF_SECONDS:g} s")
    with anyio.move_on_after(SNIFF_SECONDS):
        try:
            async with stream_within_origin(client, "GET", url, headers={"Accept": "text/event-stream"}) as response:
                kind = response.headers.get("content-type", "").split(";")[0].strip().lower()
                sniff = SseSniff(where=where, status=response.status_code, stream=kind == "text/event-stream")
                if not sniff.stream or response.status_code != 200:
                    return sniff
                async for event in sse_events(response, MAX_SNIFF_BYTES):
                    return SseSniff(where=where, status=response.status_code, stream=True, first_event=event.name)
        except httpx2.HTTPError as exc:
            return SseSniff(where=where, error=f"the request failed ({type(exc).__name__})")
    return sniff
