"""The URL and header rules for a plugin's remote servers (streamable-http, sse). Loopback means exactly
`localhost`, 127.0.0.0/8 or [::1]; messages show the scheme and host only, never the path or query."""

from __future__ import annotations

import ipaddress
import re
from urllib.parse import urlsplit

from sandbox.core.untrusted import escape_for_terminal

TOKEN = re.compile(r"^[!#$%&'*+.^_`|~0-9A-Za-z-]+$")  # RFC 9110 §5.6.2 token: what a field name may be
BAD_VALUE = re.compile(r"[\r\n\x00]")


def is_loopback(host: str) -> bool:
    if host == "localhost":
        return True
    try:
        address = ipaddress.ip_address(host)
    except ValueError:
        return False
    if address.version == 4:
        return address in ipaddress.ip_network("127.0.0.0/8")
    return address == ipaddress.IPv6Address("::1")


def url_problem(raw: str) -> str | None:
    """Why a remote server's url breaks the spec's URL rules; None when it does not."""
    try:
        parts = urlsplit(raw)
        host = parts.hostname or ""
        parts.port  # noqa: B018 - raises on a port that is not a number
    except ValueError:
        return "is not a URL"
    if parts.scheme not in ("http", "https") or not parts.netloc:
        return f"is not an absolute http(s) URL (scheme {escape_for_terminal(parts.scheme or 'none', 20)!r})"
    if parts.username is not None or parts.password is not None:
        return "carries user information (user:pass@), which the spec forbids"
    if "#" in raw:
        return "carries a fragment (#…), which the spec forbids"
    if parts.scheme == "http" and not is_loopback(host):
        shown = escape_for_terminal(host, 100)
        return (f"uses plain http on the non-loopback host {shown!r}: non-loopback endpoints MUST use https "
                "(loopback is exactly localhost, 127.0.0.0/8 or [::1])")
    return None


def header_problems(headers: dict[str, object], given_twice: list[str]) -> list[str]:
    """What is wrong with a server's header names (and values): not a token, CR/LF/NUL in a value, or a name given
    twice (exactly, which JSON parsers drop silently, or in another case: HTTP field names are case-insensitive)."""
    problems = [f"header {escape_for_terminal(name, 80)!r} is given twice (the last one silently wins)"
                for name in sorted(set(given_twice))]
    seen: dict[str, str] = {}
    for name, value in headers.items():
        shown = escape_for_terminal(name, 80)
        if not TOKEN.match(name):
            problems.append(f"header name {shown!r} is not an HTTP field name (a token: no spaces, colons or "
                            "control characters)")
        if isinstance(value, str) and BAD_VALUE.search(value):
            problems.append(f"header {shown!r} has a CR, LF or NUL in its value")
        folded = name.lower()
        if folded in seen:
            problems.append(f"headers {escape_for_terminal(seen[folded], 80)!r} and {shown!r} are the same field "
                            "(HTTP field names are case-insensitive)")
        seen.setdefault(folded, name)
    return problems
