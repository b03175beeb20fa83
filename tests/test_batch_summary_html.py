"""DIR/summary.html is self-contained (nothing loaded from anywhere) and hostile target text stays text."""

from __future__ import annotations

import re
from html.parser import HTMLParser

from scanner.batch.store import Row
from scanner.batch.summary import write_summary
from scanner.batch.summary_html import summary_html

HOSTILE = '"><script>alert(1)</script><img src=x onerror=alert(2)>'


def _row(key: str, verdict: str | None = "pass", **extra: object) -> Row:
    return Row(key=key, position=0, target=f"npm:{key}", command=None, server_args=(), origin="", state="done",
               attempts=1, not_before=0, status="complete", verdict=verdict, **extra)  # type: ignore[arg-type]


class _Elements(HTMLParser):
    def __init__(self) -> None:
        super().__init__()
        self.tags: list[tuple[str, dict[str, str | None]]] = []
        self.cells: list[str] = []

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        self.tags.append((tag, dict(attrs)))

    def handle_data(self, data: str) -> None:
        self.cells.append(data)


def _parsed(page: str) -> _Elements:
    parser = _Elements()
    parser.feed(page)
    return parser


def _rows() -> list[Row]:
    return [_row("good", score=95, scan_seconds=12.5, report="reports/npm/good/1.0.0.json"),
            _row(HOSTILE, verdict="block", score=10, scan_seconds=40.0, report="javascript:alert(3)",
                 findings=[{"rule_id": "B2", "severity": "error", "message": HOSTILE}], error=HOSTILE),
            _row("later", verdict=None, scan_seconds=None)]


def test_the_page_loads_nothing_from_anywhere() -> None:
    page = summary_html(_rows())
    elements = _parsed(page)
    assert not re.search(r"(?i)\b(https?:|ftp:|//[a-z])", page)
    assert not [t for t, a in elements.tags if t in ("link", "img", "iframe", "object", "embed")]
    assert not [a for t, a in elements.tags if t == "script" and "src" in a]
    assert "default-src 'none'" in page and page.count("<svg") == 2


def test_hostile_text_is_escaped_everywhere() -> None:
    page = summary_html(_rows())
    elements = _parsed(page)
    assert [t for t, _ in elements.tags].count("script") == 1  # only the page's own sort script
    assert not [t for t, _ in elements.tags if t == "img"]
    assert not any(k.startswith("on") for _, a in elements.tags for k in a)
    assert "<script>alert" not in page and "<img" not in page  # never raw
    assert any(HOSTILE in cell for cell in elements.cells)  # ... but shown, as text
    hrefs = [a["href"] for t, a in elements.tags if t == "a"]
    assert hrefs == ["reports/npm/good/1.0.0.json"]  # a scheme in a report path never becomes a link


def test_every_target_is_a_row_with_its_verdict_and_the_batch_writes_the_page(tmp_path) -> None:
    rows = _rows()
    write_summary(tmp_path, rows, "error")
    page = (tmp_path / "summary.html").read_text(encoding="utf-8")
    body = page.split("<tbody>")[1].split("</tbody>")[0]
    assert body.count("<tr>") == len(rows)
    cells = _parsed(body).cells
    assert "block" in cells and "pass" in cells and "95" in cells
