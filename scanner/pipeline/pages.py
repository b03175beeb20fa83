"""Every page of a paginated MCP listing (tools, prompts, resources, templates), whichever client asks."""

from __future__ import annotations

from typing import Any

import anyio
from pydantic import BaseModel

MAX_PAGES = 100
MAX_ITEMS = 10_000


async def paginate(method: Any, attribute: str, sink: list[dict[str, Any]], timeout: float) -> None:
    cursor: str | None = None
    seen: set[str] = set()
    for _ in range(MAX_PAGES):
        with anyio.fail_after(timeout):
            page = await method(cursor=cursor) if cursor else await method()
        items = getattr(page, attribute, None) or []
        for item in items:
            if len(sink) >= MAX_ITEMS:
                return
            sink.append(as_served(item))
        cursor = page.next_cursor
        if not cursor or cursor in seen:
            return
        seen.add(cursor)


def as_served(item: BaseModel) -> dict[str, Any]:
    """One listed item as a JSON dict. Pydantic refuses to serialize very deep values (a schema nested past ~200
    levels): such an item keeps its schemas as the plain dicts they were parsed into. The probe phase's re-lists
    dump their pages with it too (scanner.probes.relist_tools)."""
    try:
        return item.model_dump(mode="json", by_alias=True, exclude_none=True)
    except ValueError:
        deep = {"input_schema", "output_schema"}
        dumped = item.model_dump(mode="json", by_alias=True, exclude_none=True, exclude=deep)
        for name in deep:
            value = getattr(item, name, None)
            if value is not None:
                dumped[type(item).model_fields[name].alias or name] = value
        return dumped
