"""Every page of a paginated MCP listing (tools, prompts, resources, templates), whichever client asks."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import anyio
from pydantic import BaseModel

MAX_PAGES = 100
MAX_ITEMS = 10_000


@dataclass
class PageBound:
    """The bound every reading of a paginated listing shares (the first listing, the second client's, the probes'
    re-lists): at most MAX_PAGES pages and MAX_ITEMS items, and a cursor the server already gave ends it. A listing
    stopped at a bound while the server offered more says so in `cut`: what came after was never read, so the scan
    that used it is incomplete, never a silent pass. A repeated cursor is a cut too: a client that follows it asks
    again, and a server that keeps state can answer that second ask with tools the first never showed."""

    pages: int = 0
    items: int = 0
    seen: set[str] = field(default_factory=set)
    cut: str | None = None

    def kept(self, items: list[Any]) -> list[Any]:
        """The page's items within the item bound (`cut` set when some are left out)."""
        room = MAX_ITEMS - self.items
        if len(items) > room:
            self.cut = f"cut at {MAX_ITEMS:,} items: the server served more, which were not read"
            items = items[:max(room, 0)]
        self.items += len(items)
        self.pages += 1
        return items

    def next_cursor(self, cursor: str | None) -> str | None:
        """The cursor to ask for next; None when the listing ends here (done, a repeated cursor, or a bound)."""
        if self.cut is not None or not cursor:
            return None
        if cursor in self.seen:
            self.cut = ("stopped at a cursor the server had given before: a client that follows it asks again and "
                        "may be served what was not read")
            return None
        if self.pages >= MAX_PAGES:
            self.cut = f"cut after {MAX_PAGES} pages: the server offered another, which was not read"
            return None
        self.seen.add(cursor)
        return cursor


async def paginate(method: Any, attribute: str, sink: list[dict[str, Any]], timeout: float) -> str | None:
    """Every page of a listing into `sink` (as served), within PageBound; returns why it stopped early (None: the
    server's listing was read whole)."""
    bound = PageBound()
    cursor: str | None = None
    while True:
        with anyio.fail_after(timeout):
            page = await method(cursor=cursor) if cursor else await method()
        sink.extend(as_served(item) for item in bound.kept(getattr(page, attribute, None) or []))
        cursor = bound.next_cursor(page.next_cursor)
        if cursor is None:
            return bound.cut


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
