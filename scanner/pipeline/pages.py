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
    """One model the server sent (a listed item, a call's result, its capabilities) as a JSON dict. Pydantic refuses
    to serialize very deep values (past ~250 levels: a schema, a `_meta`, structured content): a field that holds one
    keeps the plain values it was parsed into, its models dumped field by field alike. The probe phase's re-lists dump
    their pages with it too (scanner.probes.relist_tools)."""
    try:
        return item.model_dump(mode="json", by_alias=True, exclude_none=True)
    except ValueError:
        return _field_by_field(item)


def _field_by_field(item: BaseModel) -> dict[str, Any]:
    dumped: dict[str, Any] = {}
    for name, info in type(item).model_fields.items():
        value = getattr(item, name)
        if value is None:
            continue
        try:
            dumped.update(item.model_dump(mode="json", by_alias=True, exclude_none=True, include={name}))
        except ValueError:
            dumped[info.alias or name] = _as_parsed(value)
    return dumped


def _as_parsed(value: Any) -> Any:
    """A value too deep to serialize: a model field by field, a list's models alike, anything else (JSON values,
    as parsed from the wire) as it is."""
    if isinstance(value, BaseModel):
        return as_served(value)
    if isinstance(value, list):
        return [as_served(entry) if isinstance(entry, BaseModel) else entry for entry in value]
    return value
