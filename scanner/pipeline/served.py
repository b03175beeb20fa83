"""Stage 7: what the server served, as the report holds it: the server's identity, the definitions capped for
storage (and uncapped, for the lockfile and the score), the time to the first tools/list, and what went wrong on
the wire, one line each."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from sandbox.core.untrusted import cap_json, cap_text
from scanner.pipeline.inventory_model import Inventory
from scanner.pipeline.transport import WireHealth
from scanner.report.model import ServerInfo


@dataclass(frozen=True)
class Served:
    server: ServerInfo
    tools: list[dict[str, Any]]  # capped, as the report stores them
    prompts: list[dict[str, Any]]
    resources: list[dict[str, Any]]
    resource_templates: list[dict[str, Any]]
    uncapped: dict[str, Any]  # the same four and the server, as served: Report._served
    first_tools_list: float | None
    errors: list[str] = field(default_factory=list)


def served_definitions(inventory: Inventory, health: WireHealth, exit_code: int | None) -> Served:
    return Served(
        server=_server_info(inventory.server), tools=cap_json(inventory.tools), prompts=cap_json(inventory.prompts),
        resources=cap_json(inventory.resources), resource_templates=cap_json(inventory.resource_templates),
        uncapped={"tools": inventory.tools, "prompts": inventory.prompts, "resources": inventory.resources,
                  "resource_templates": inventory.resource_templates,
                  "server": _server_info(inventory.server, capped=False)},
        first_tools_list=inventory.first_tools_list_seconds, errors=_errors(inventory, health, exit_code))


def _errors(inventory: Inventory, health: WireHealth, exit_code: int | None) -> list[str]:
    errors = [*inventory.errors, *inventory.cuts]
    errors.extend(health.problems())
    if exit_code is not None and not inventory.connected:
        errors.append(f"the server exited with code {exit_code} before the session started")
    return errors


def _server_info(served: dict[str, Any], capped: bool = True) -> ServerInfo:
    """The server's identity capped for the report, or (capped=False) its text as served, for the lock: instructions
    edited past the report's 16,384-character cap must still differ from the pinned ones. Capabilities stay bounded
    either way (their depth is not the server's text, and the lock writer must be able to serialise them)."""
    def text(key: str, limit: int) -> str | None:
        value = served.get(key)
        if not isinstance(value, str):
            return None
        return cap_text(value, limit) if capped else value

    return ServerInfo(name=text("name", 256), version=text("version", 256),
                      protocol_version=text("protocol_version", 64),
                      capabilities=cap_json(served.get("capabilities") or {}), instructions=text("instructions", 16_384))
