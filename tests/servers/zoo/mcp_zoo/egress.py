"""A zoo server whose tools reach the network in each way B2 grades (for tests/test_probes_live.py).

Every name is under `.invalid`: in the sandbox the egress sink answers the lookups and takes the connections; without
it nothing resolves. Nothing here names a real host or an IP.

- `fetch_page` (readOnlyHint + openWorldHint: true) fetches the URL it is given: the scanner's own probe URL (info);
- `web_search` (no annotations: MCP's default is an open world) asks its search host (warning);
- `get_time` (annotated a closed world) sends telemetry on every call (error, and B1), one finding for all calls;
- at start-up, before any call, the server looks up its update host (error, start-up).
"""

from __future__ import annotations

import socket
import time
from typing import Any
from urllib.parse import urlsplit

from mcp_zoo.protocol import Server, text_result, tool

SEARCH_HOST = "search.zoo-engine.invalid"
TELEMETRY_HOST = "telemetry.zoo-vendor.invalid"
UPDATE_HOST = "updates.zoo-vendor.invalid"


def _get(host: str, path: str) -> str:
    """An HTTP GET to host:80, waiting until the other side closes (the sink logs the request before it does)."""
    try:
        address = socket.getaddrinfo(host, 80, type=socket.SOCK_STREAM)[0][4]
        with socket.create_connection(address[:2], timeout=3) as connection:
            connection.sendall(f"GET {path} HTTP/1.1\r\nHost: {host}\r\nContent-Length: 0\r\n\r\n".encode())
            while connection.recv(4096):
                pass
        return "sent"
    except OSError as exc:
        return f"failed ({exc.__class__.__name__})"


def egress() -> None:
    try:
        socket.getaddrinfo(UPDATE_HOST, 443, type=socket.SOCK_STREAM)  # at start-up, before any call
    except OSError:
        pass

    def fetch(arguments: dict[str, Any]) -> dict[str, Any]:
        url = arguments.get("url")
        host = urlsplit(url).hostname if isinstance(url, str) else None
        if not host:
            return text_result("Argument 'url' must be an absolute http(s) URL.", True)
        return text_result(f"GET {url}: {_get(host, urlsplit(url).path or '/')}")

    def search(arguments: dict[str, Any]) -> str:
        return f"search for {str(arguments.get('query'))[:40]!r}: {_get(SEARCH_HOST, '/q')}"

    def now(arguments: dict[str, Any]) -> dict[str, Any]:
        _get(TELEMETRY_HOST, "/ping")
        zone = arguments.get("timezone")
        if zone not in ("UTC", "Europe/Lisbon"):
            return text_result("Argument 'timezone' must be 'UTC' or 'Europe/Lisbon'.", True)
        return text_result(time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()))

    tools = [
        tool("fetch_page", "Fetch a web page by its URL and return the status of the request as text.",
             {"url": {"type": "string", "format": "uri", "description": "Absolute http(s) URL of the page."}},
             annotations={"readOnlyHint": True, "openWorldHint": True})
        | {"inputSchema": {"type": "object", "required": ["url"], "properties": {
            "url": {"type": "string", "format": "uri", "description": "Absolute http(s) URL of the page."}}}},
        tool("web_search", "Search the web for a query and return the top results as text.",
             {"query": {"type": "string", "description": "What to search for."}}),
        tool("get_time", "Return the current time in the given time zone, as ISO 8601 text.",
             annotations={"readOnlyHint": True, "destructiveHint": False, "openWorldHint": False})
        | {"inputSchema": {"type": "object", "required": ["timezone"], "properties": {
            "timezone": {"type": "string", "enum": ["UTC", "Europe/Lisbon"], "description": "The time zone."}}}},
    ]
    Server("zoo-probe-egress", tools, calls={"fetch_page": fetch, "web_search": search, "get_time": now}).serve()
