"""Writing a section of the terminal view as rich would, without rich's layout where the output is plain text: on a
console that writes no styles, a Text on one line that fits is its plain text, and a printable ASCII one that rich
would only word-wrap is its plain text wrapped the way rich wraps it (a report of 3,000 tools has hundreds of such
lines; laying each out costs rich a render). The bytes are rich's (tests/test_terminal_plain_lines.py)."""

from __future__ import annotations

from rich._wrap import divide_line  # rich's own word wrap (see _plain_lines)
from rich.cells import cell_len
from rich.console import Console, Group, RenderableType
from rich.text import Text


def _fits(width: int, item: RenderableType) -> bool:
    """A Text rich would print as its plain text and a newline: one line within the width (an ASCII line is never
    wider than its length)."""
    if not isinstance(item, Text) or item.end != "\n":
        return False
    plain = item.plain
    if "\n" in plain or "\t" in plain:
        return False
    return len(plain) <= width if plain.isascii() else cell_len(plain) <= width


def _plain_lines(width: int, item: RenderableType) -> str | None:
    """What rich prints for `item` on a console that writes no styles, when that is plain text worked out here: a
    Text on one line that fits, or a printable ASCII one that rich would only word-wrap (its own `divide_line`,
    then each line's end trimmed and cut to the width as `Text.wrap` does); else None (rich lays it out)."""
    if _fits(width, item):
        return item.plain + "\n"  # type: ignore[union-attr]
    if not isinstance(item, Text) or item.end != "\n" or item.justify or item.overflow or item.no_wrap:
        return None
    plain = item.plain
    if not (plain.isascii() and plain.isprintable()):
        return None
    offsets = [0, *divide_line(plain, width, fold=True), len(plain)]
    lines = []
    for start, end in zip(offsets, offsets[1:]):
        line = plain[start:end]
        if len(line) > width:  # Text.rstrip_end, then Text.truncate
            line = line[:max(width, len(line.rstrip()))][:width]
        lines.append(line)
    return "\n".join(lines) + "\n"


def print_section(console: Console, section: RenderableType) -> None:
    """As `console.print(section)`; a Group's Texts whose output is plain text (_plain_lines) are written as such,
    the rest laid out by rich (a long list of findings then costs a string join, not a layout per line). Only on a
    console that writes no styles (not a terminal, or NO_COLOR), records nothing and wraps: there rich's output of
    such a Text is its plain text."""
    if console.color_system is not None or console.record or console.soft_wrap or not isinstance(section, Group):
        console.print(section)
        return
    width = console.width
    laid_out: list[RenderableType] = []
    written: list[str] = []
    for item in [*section.renderables, None]:  # None: the end, where what is left is written
        plain = None if item is None else _plain_lines(width, item)
        if laid_out and (item is None or plain is not None):
            console.print(Group(*laid_out))
            laid_out = []
        if written and (item is None or plain is None):
            console.file.write("".join(written))
            written = []
        if plain is not None:
            written.append(plain)
        elif item is not None:
            laid_out.append(item)
