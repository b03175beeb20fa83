"""Whether the scan's spinner would show: rich draws it on stderr only when that is a terminal (or when
TTY_COMPATIBLE, FORCE_COLOR or TTY_INTERACTIVE say to treat it as one); otherwise not a character of it is written.
Asked before rich is imported, so a scan whose stderr is a log or a pipe (CI, `2>file`) does not load rich for a
spinner nobody sees (rich's console, live display and spinners: ~25 ms of its start-up)."""

from __future__ import annotations

import os
from collections.abc import Callable, Iterator, Mapping
from contextlib import contextmanager
from typing import TextIO

from sandbox.core.untrusted import escape_for_terminal

# rich's own overrides of its terminal detection (rich.console.Console.is_terminal / is_interactive): with any of
# them set, rich decides
RICH_TERMINAL_ENV = ("TTY_COMPATIBLE", "FORCE_COLOR", "TTY_INTERACTIVE")


def spinner_shows(stream: TextIO, environ: Mapping[str, str] = os.environ) -> bool:
    """True unless `stream` is surely not a terminal rich would draw on (then the spinner writes nothing)."""
    if any(name in environ for name in RICH_TERMINAL_ENV):
        return True
    try:
        return bool(stream.isatty())
    except (AttributeError, ValueError):  # no isatty, or a closed stream: rich treats both as no terminal
        return False


@contextmanager
def spinning(first: str) -> Iterator[Callable[[str], None]]:
    """rich's spinner on stderr from `first` on, and the function that shows each later step on it. A step can name
    a server's tool (`probing TOOL (1/3): LABEL`), so it is shown as plain text with every control character escaped:
    as rich markup a name such as `x[/]` raised MarkupError, `[link=URL]` made a hyperlink, and an OSC 52 clipboard
    write or a bidi override reached the terminal raw."""
    from rich.console import Console
    from rich.text import Text

    console = Console(stderr=True, highlight=False, emoji=False)

    def line(step: str) -> Text:
        """One line beside the spinner's frame, cut with an ellipsis at the terminal's width (read at each step):
        wrapped, the status would jump between one line and two as the steps change."""
        text = Text(escape_for_terminal(step, 200))
        text.truncate(max(console.width - 2, 10), overflow="ellipsis")
        return text

    with console.status(line(first), spinner="dots") as status:
        yield lambda step: status.update(line(step))
