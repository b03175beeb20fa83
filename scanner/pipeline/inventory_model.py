"""What a server served when it was listed: the Inventory every stage after the listing reads (apart from
scanner/pipeline/inventory.py, which imports the MCP SDK, so that those stages do not)."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from scanner.pipeline.wire_reader import RejectedTool


@dataclass
class Inventory:
    """What the server served, as served (not yet capped: the rules measure real sizes; the report caps)."""

    server: dict[str, Any] = field(default_factory=dict)
    tools: list[dict[str, Any]] = field(default_factory=list)
    prompts: list[dict[str, Any]] = field(default_factory=list)
    resources: list[dict[str, Any]] = field(default_factory=list)
    resource_templates: list[dict[str, Any]] = field(default_factory=list)
    first_tools_list_seconds: float | None = None
    first_answer_seconds: float | None = None  # from the server's start to the end of the handshake
    listing_seconds: float | None = None  # the listing itself, after the handshake
    # Tools a tools/list page held that the SDK's Tool model rejects (bounded; the valid tools of the page are kept).
    rejected_tools: list[RejectedTool] = field(default_factory=list)
    errors: list[str] = field(default_factory=list)
    # Listings stopped at the page bound while the server offered more (scanner.pipeline.pages.PageBound): the scan
    # is incomplete, but what was read is still probed.
    cuts: list[str] = field(default_factory=list)
    connected: bool = False
