"""The MCP client identity the scanner presents to the server under test, in one place.

A hostile server reads `clientInfo` and `protocolVersion` from the handshake and can behave only when nobody is
watching: hide a poisoned tool from a client whose name says "sandbox" or "scanner". So the scan never names
itself: every session presents the identity of a real, widely used MCP client. The first listing and the probes use
DEFAULT (what Claude Desktop sends); the second listing (scanner/pipeline/relisting.py) uses ALTERNATE (what Cursor
sends), with an older protocol version and the plain `initialize` handshake, so that a server telling clients apart
by either shows two different listings (rule P10).

The protocol versions are ones the MCP SDK in use negotiates through `initialize` (`HANDSHAKE_PROTOCOL_VERSIONS`).
"""

from __future__ import annotations

from dataclasses import dataclass

from mcp_types import Implementation
from mcp_types.version import HANDSHAKE_PROTOCOL_VERSIONS, LATEST_HANDSHAKE_VERSION


@dataclass(frozen=True)
class ClientIdentity:
    """What a session says it is: clientInfo (name, version) and the protocol version its `initialize` offers."""

    name: str
    version: str
    protocol_version: str
    client: str  # the real client this identity is modelled on (for the docs and the report's wording)

    def __post_init__(self) -> None:
        if self.protocol_version not in HANDSHAKE_PROTOCOL_VERSIONS:
            raise ValueError(f"protocol version {self.protocol_version!r} is not one the MCP SDK negotiates "
                             f"through initialize ({', '.join(HANDSHAKE_PROTOCOL_VERSIONS)})")

    def implementation(self) -> Implementation:
        return Implementation(name=self.name, version=self.version)

    def describe(self) -> str:
        return f"clientInfo {self.name} {self.version} ({self.client}), protocol version {self.protocol_version}"


# The first listing and the probes: Claude Desktop's clientInfo. The SDK's `mode="auto"` session offers its newest
# versions (server/discover, then initialize at LATEST_HANDSHAKE_VERSION), as an up-to-date client does.
DEFAULT = ClientIdentity(name="claude-ai", version="0.1.0", protocol_version=LATEST_HANDSHAKE_VERSION,
                         client="Claude Desktop")

# The second listing: Cursor's clientInfo, and an older protocol version offered with a plain initialize (no
# server/discover first).
ALTERNATE = ClientIdentity(name="cursor-vscode", version="1.0.0", protocol_version="2025-06-18", client="Cursor")
