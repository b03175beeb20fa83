"""B3 for what the server lists: a planted secret in its instructions, tool definitions, prompts or resources goes
to the model with every request, as one in a tool's answer does (and into every lockfile and report of the server).
Only the answers and the egress were searched, so a server that wrote `$GITHUB_TOKEN` into a tool's description
passed. The first listing is searched whole, as JSON, and so are the tools as the session left them (a definition
changed during the probes, P8)."""

from __future__ import annotations

import json
from typing import Any

from sandbox.core.untrusted import cap_json
from sandbox.run.canary_search import find_canaries
from scanner.pipeline.inventory_model import Inventory
from scanner.report.model import CanaryEvent

MAX_LISTED_STRING = 1_000_000  # a description is read whole (the wire bounds a page at 8 MiB)


def listing_canaries(inventory: Inventory, tools_after: list[dict[str, Any]],
                     canaries: dict[str, str]) -> list[CanaryEvent]:
    """The planted tokens in the listing (server info and instructions, tools, prompts, resources, templates) and in
    `tools_after`, each place and encoding once (`how`: response, the server's own text the model reads)."""
    parts: list[Any] = [inventory.server, inventory.tools, inventory.prompts, inventory.resources,
                        inventory.resource_templates]
    if tools_after != inventory.tools:
        parts.append(tools_after)
    text = "\n".join(json.dumps(cap_json(part, max_string=MAX_LISTED_STRING), ensure_ascii=False) for part in parts)
    return [CanaryEvent(where=hit.where, how="response", encoding=hit.encoding)
            for hit in find_canaries(text, canaries)]
