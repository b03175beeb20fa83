"""URLs from configs and specs may carry credentials: show only what is safe."""

from __future__ import annotations

from urllib.parse import urlsplit


def origin_only(url: str) -> str:
    """scheme://host[:port] of a URL: no user info, path, query or fragment (for remote MCP entries)."""
    try:
        parts = urlsplit(url.strip())
        host = parts.hostname or ""
        port = f":{parts.port}" if parts.port else ""
    except ValueError:
        return "(unparseable URL)"
    if not parts.scheme or not host:
        return "(unparseable URL)"
    return f"{parts.scheme}://{host}{port}"


def without_secrets(url: str) -> str:
    """A URL without user info and query string (keeps scheme, host, path and #fragment, e.g. a git ref)."""
    try:
        parts = urlsplit(url.strip())
        host = parts.hostname or ""
        port = f":{parts.port}" if parts.port else ""
    except ValueError:
        return "(unparseable URL)"
    fragment = f"#{parts.fragment}" if parts.fragment else ""
    if not host:
        return f"{parts.scheme}:{parts.path}{fragment}" if parts.scheme else "(unparseable URL)"
    return f"{parts.scheme}://{host}{port}{parts.path}{fragment}"
