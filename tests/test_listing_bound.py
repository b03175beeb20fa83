"""A listing the scan stops at its bound (100 pages, 10,000 items) while the server offers more says so: the report
is incomplete, never a silent pass over the tools it never read; what it read is still probed, and a re-list reads
the same part of it (no false P8 for tools past the cut)."""

from __future__ import annotations

from typing import Any

import anyio
import pytest

from scanner.pipeline.pages import MAX_ITEMS, MAX_PAGES, paginate
from scanner.probes.relist_tools import fetch_tools


class Page:
    def __init__(self, tools: list[Any], next_cursor: str | None) -> None:
        self.tools, self.next_cursor = tools, next_cursor


class Tool:
    def __init__(self, name: str) -> None:
        self.name = name

    def model_dump(self, **_: Any) -> dict[str, Any]:
        return {"name": self.name}


def lister(per_page: int, pages: int | None, cycle: bool = False):
    """A listing of `pages` pages (None: endless) of `per_page` tools each; `cycle`: page 2 points back at page 1."""
    asked: list[str | None] = []

    async def list_tools(cursor: str | None = None) -> Page:
        asked.append(cursor)
        start = int(cursor or 0)
        tools = [Tool(f"t{start}_{i}") for i in range(per_page)]
        last = pages is not None and start + 1 >= pages
        following = "1" if cycle and start == 2 else (None if last else str(start + 1))
        return Page(tools, following)

    return list_tools, asked


def read(per_page: int, pages: int | None, cycle: bool = False) -> tuple[list[dict[str, Any]], str | None, int]:
    method, asked = lister(per_page, pages, cycle)
    sink: list[dict[str, Any]] = []
    cut = anyio.run(paginate, method, "tools", sink, 5.0)
    return sink, cut, len(asked)


def test_a_listing_read_whole_is_not_cut() -> None:
    sink, cut, asked = read(per_page=3, pages=4)
    assert (len(sink), cut, asked) == (12, None, 4)
    sink, cut, asked = read(per_page=100, pages=MAX_PAGES)  # exactly at both bounds: nothing more was offered
    assert (len(sink), cut, asked) == (MAX_ITEMS, None, MAX_PAGES)


def test_an_endless_listing_is_cut_at_the_page_bound_and_says_so() -> None:
    sink, cut, asked = read(per_page=1, pages=None)
    assert (len(sink), asked) == (MAX_PAGES, MAX_PAGES)
    assert cut == f"cut after {MAX_PAGES} pages: the server offered another, which was not read"


def test_a_listing_past_the_item_bound_is_cut_and_says_so() -> None:
    sink, cut, asked = read(per_page=3_000, pages=4)
    assert len(sink) == MAX_ITEMS and asked == 4
    assert cut is not None and cut.startswith("cut at 10,000 items")
    sink, cut, _ = read(per_page=100, pages=MAX_PAGES + 1)  # a 101st page: the page bound says it
    assert len(sink) == MAX_ITEMS and cut is not None and "pages" in cut


def test_a_cursor_given_again_ends_the_listing_and_says_so() -> None:
    # 0 -> 1 -> 2 -> 1: a stateful server can answer the second ask of "1" with tools the first never showed, and a
    # client that follows cursors (no client checks for repeats) reads them: the scan stops there and is incomplete
    sink, cut, asked = read(per_page=2, pages=None, cycle=True)
    assert (len(sink), asked) == (6, 3)
    assert cut is not None and cut.startswith("stopped at a cursor the server had given before")


def test_a_probe_re_list_reads_the_same_part_as_the_first_listing() -> None:
    method, _ = lister(per_page=3_000, pages=5)

    class Client:
        list_tools = staticmethod(method)

    first, _, _ = read(per_page=3_000, pages=5)
    again = anyio.run(fetch_tools, Client(), 5.0)
    assert again == first and len(again) == MAX_ITEMS  # 15,000 served: a re-list of all of them read as "added"


@pytest.mark.docker
def test_a_live_endless_listing_makes_the_scan_incomplete_and_its_tool_is_still_probed(no_leftovers):
    from scanner.pipeline.inventory import Timeouts
    from scanner.pipeline.scan import ScanOptions, run_scan
    from scanner.probes.runner import ProbeOptions
    from tests.sandbox_helpers import ZOO

    report = run_scan(ScanOptions(target=str(ZOO), command="zoo-endless-pages",
                                  timeouts=Timeouts(startup=30, request=10),
                                  probes=ProbeOptions(timeout=10.0, error_probes=False)))
    assert [t["name"] for t in report.tools] == ["echo_text"]
    assert report.status == "incomplete"
    assert f"listing tools: cut after {MAX_PAGES} pages" in " ".join(report.errors), report.errors
    assert {p.tool for p in report.probes} == {"echo_text"}
    assert not [f for f in report.findings if f.rule_id == "P8"]


def _collect_with_rejected(count: int):  # type: ignore[no-untyped-def]
    """A listing whose one page held `count` tools the SDK's model rejects (as the wire reader notes them)."""
    from scanner.pipeline.inventory import Timeouts, collect_over
    from scanner.pipeline.transport import WireHealth
    from scanner.pipeline.wire_reader import RejectedTool

    health = WireHealth()

    class Client:
        server_info = server_capabilities = instructions = None
        protocol_version = "2025-11-25"

        async def __aenter__(self) -> "Client":
            return self

        async def __aexit__(self, *_: Any) -> None:
            return None

        async def list_tools(self, cursor: str | None = None) -> Page:
            health.note_rejected(tuple(RejectedTool(i, "inputSchema: Field required", {"name": f"bad_{i}"})
                                       for i in range(count)))
            return Page([Tool("good")], None)

    return anyio.run(collect_over, lambda _handler: Client(), health, Timeouts(startup=5, request=5), 0.0)


def test_rejected_tools_past_the_kept_ones_make_the_listing_cut() -> None:
    from scanner.pipeline.transport import MAX_REJECTED_TOOLS

    inventory = _collect_with_rejected(MAX_REJECTED_TOOLS + 50)
    assert len(inventory.rejected_tools) == MAX_REJECTED_TOOLS and inventory.errors == []
    assert inventory.cuts == [f"listing tools: 50 more tools the MCP schema rejects (over {MAX_REJECTED_TOOLS}) were "
                              f"not read, linted or called"]
    assert _collect_with_rejected(MAX_REJECTED_TOOLS).cuts == []  # every rejected tool kept: nothing is unread
