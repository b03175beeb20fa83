"""The Markdown tables of README.md and docs/: each block of table rows starts with a header and its `| --- |`
separator, so no row is cut off from its table by a paragraph (it would render as a line of pipes)."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
SEPARATOR = re.compile(r"^\|(\s*:?-{3,}:?\s*\|)+\s*$")
DOCS = [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]


def table_blocks(text: str) -> list[tuple[int, list[str]]]:
    """Each run of lines starting with `|` outside code fences, with the line number it starts on."""
    blocks: list[tuple[int, list[str]]] = []
    fenced, current, start = False, [], 0
    for number, line in enumerate(text.splitlines() + [""], 1):
        if line.lstrip().startswith("```"):
            fenced = not fenced
        if not fenced and line.startswith("|"):
            start = start or number
            current.append(line)
            continue
        if current:
            blocks.append((start, current))
        current, start = [], 0
    return blocks


@pytest.mark.parametrize("path", DOCS, ids=lambda p: p.name)
def test_every_table_row_belongs_to_a_table_with_a_header(path: Path) -> None:
    for start, rows in table_blocks(path.read_text(encoding="utf-8")):
        assert len(rows) >= 2 and SEPARATOR.match(rows[1]), f"{path.name}:{start}: rows outside a table: {rows[0]}"
