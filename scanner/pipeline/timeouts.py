"""How long the scan waits for a server: its handshake (start-up) and each request. Apart from the listing
(scanner/pipeline/inventory.py, which imports mcp) so that what starts a server needs no MCP client."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Timeouts:
    startup: float = 60.0
    request: float = 30.0
