"""The batch's progress on stderr: a status line (done / running / failed / ETA) kept at the bottom on a terminal,
and one plain line per finished target everywhere (so a CI log or a pipe reads the same story)."""

from __future__ import annotations

import time
from collections.abc import Callable
from contextlib import AbstractContextManager, nullcontext
from typing import Any

from rich.console import Console

from sandbox.core.untrusted import escape_for_terminal


def eta_text(remaining: int, finished: int, elapsed: float) -> str:
    """`ETA 3m20s` from this run's pace (finished targets over elapsed time); `ETA ?` before the first one."""
    if remaining == 0:
        return "ETA 0s"
    if finished == 0 or elapsed <= 0:
        return "ETA ?"
    seconds = int(remaining * elapsed / finished)
    hours, rest = divmod(seconds, 3600)
    minutes, secs = divmod(rest, 60)
    return f"ETA {hours}h{minutes:02d}m" if hours else f"ETA {minutes}m{secs:02d}s" if minutes else f"ETA {secs}s"


def status_text(counts: dict[str, int], finished: int, elapsed: float) -> str:
    remaining = counts["queued"] + counts["running"]
    total = sum(counts.values())
    return (f"{counts['done']}/{total} done · {counts['running']} running · {counts['failed']} failed · "
            f"{counts['queued']} queued · {eta_text(remaining, finished, elapsed)}")


class Progress:
    def __init__(self, console: Console | None = None, clock: Callable[[], float] = time.monotonic) -> None:
        self._console = console or Console(stderr=True, highlight=False, soft_wrap=True, emoji=False)
        self._clock = clock
        self._began = clock()
        self._finished = 0
        self._status: Any = None

    def live(self) -> AbstractContextManager[Any]:
        """The status line's lifetime (nothing on a non-terminal)."""
        if not self._console.is_terminal:
            return nullcontext()
        self._status = self._console.status("starting", spinner="dots")
        return self._status  # type: ignore[no-any-return]

    def update(self, counts: dict[str, int]) -> None:
        if self._status is not None:
            self._status.update(status_text(counts, self._finished, self._clock() - self._began))

    def finished(self, what: str, counts: dict[str, int], *, counted: bool = True) -> None:
        """One line for a target that ended (done, failed, retried), with the counts after it."""
        self._finished += int(counted)
        line = f"{escape_for_terminal(what, 600)} [{status_text(counts, self._finished, self._clock() - self._began)}]"
        self._console.print(line, markup=False, highlight=False)
        self.update(counts)

    def note(self, text: str) -> None:
        self._console.print(escape_for_terminal(text, 1000), markup=False, highlight=False)
