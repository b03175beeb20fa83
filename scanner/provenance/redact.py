"""URLs from configs and specs may carry credentials: show only what is safe."""

from __future__ import annotations

from urllib.parse import SplitResult, urlsplit


def _location(url: str) -> tuple[SplitResult, str] | None:
    """The URL's parts and its `host[:port]` (no user info), None when it cannot be parsed."""
    try:
        parts = urlsplit(url.strip())
        host = parts.hostname or ""
        port = f":{parts.port}" if parts.port else ""
    except ValueError:
        return None
    return parts, f"{host}{port}" if host else ""


def origin_only(url: str) -> str:
    """scheme://host[:port] of a URL: no user info, path, query or fragment (for remote MCP entries)."""
    located = _location(url)
    if located is None or not located[0].scheme or not located[1]:
        return "(unparseable URL)"
    return f"{located[0].scheme}://{located[1]}"


def without_secrets(url: str) -> str:
    """A URL without user info and query string (keeps scheme, host, path and #fragment, e.g. a git ref)."""
    located = _location(url)
    if located is None:
        return "(unparseable URL)"
    parts, location = located
    fragment = f"#{parts.fragment}" if parts.fragment else ""
    if not location:
        return f"{parts.scheme}:{parts.path}{fragment}" if parts.scheme else "(unparseable URL)"
    return f"{parts.scheme}://{location}{parts.path}{fragment}"
