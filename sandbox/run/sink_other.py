"""The attempts the egress sink's listeners never see: packets that are neither TCP nor UDP (an ICMP echo from an
unprivileged ping socket, which the engine allows; a UDP-Lite datagram). The sink's nftables `other` chain
(images/sink/sink.nft) puts each one's destination and protocol in a set; this reads the sets once, at the scan's
end, with one exec as the sink's root (its NET_ADMIN lets `nft` list them; the listener itself has no capability).
The payload is not read, and which call sent it is not known: the set keeps no time."""

from __future__ import annotations

import json
from typing import Any

import docker
from docker.errors import APIError, NotFound

from sandbox.core.errors import SandboxError
from sandbox.core.untrusted import cap_text

SETS = ("other4", "other6")
SET_SIZE = 256  # as sink.nft declares them: a full set takes no new destination
MAX_OUTPUT_BYTES = 1024 * 1024


def other_attempts(client: docker.DockerClient, container_id: str) -> tuple[list[dict[str, Any]], bool]:
    """Each destination and protocol the sets hold, as an egress record (`kind: other`, `protocol`,
    `original_dst`); and whether a set is full (later destinations were not kept). SandboxError when they could not
    be read."""
    command = ["nft", "-j", "list", "table", "inet", "mcp_sink"]
    try:
        exec_id = client.api.exec_create(container_id, command, stdout=True, stderr=True, user="0")["Id"]
        stdout, stderr = client.api.exec_start(exec_id, demux=True)
    except (APIError, NotFound) as exc:
        raise SandboxError(f"could not read the egress sink's count of other protocols: {exc}") from exc
    try:
        listing = json.loads(bytes(stdout or b"")[:MAX_OUTPUT_BYTES])
    except ValueError as exc:
        said = cap_text(bytes(stderr or b"").decode("utf-8", errors="replace"), 200)
        raise SandboxError(f"could not read the egress sink's count of other protocols: {said or exc}") from exc
    return _elements(listing)


def _elements(listing: Any) -> tuple[list[dict[str, Any]], bool]:
    events: list[dict[str, Any]] = []
    full = False
    for item in listing.get("nftables", []) if isinstance(listing, dict) else []:
        found = item.get("set") if isinstance(item, dict) else None
        if not isinstance(found, dict) or found.get("name") not in SETS:
            continue
        elements = [entry for entry in found.get("elem") or [] if isinstance(entry, dict)]
        full = full or len(elements) >= SET_SIZE
        for entry in elements:
            value = entry.get("elem", {}).get("val", {}) if isinstance(entry.get("elem"), dict) else entry
            pair = value.get("concat") if isinstance(value, dict) else None
            if isinstance(pair, list) and len(pair) == 2:
                events.append({"kind": "other", "protocol": cap_text(str(pair[1]), 40),
                               "original_dst": cap_text(str(pair[0]), 80)})
    return events, full
