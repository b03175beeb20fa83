"""Standard output whose reader went away (`mcp-sandbox check t.json --sarif r.sarif | head -1`): the rest of what
goes there is dropped, and the command carries on.

Left alone, the first write after the reader closed the pipe raises BrokenPipeError (EPIPE): rich's console then
exits 1 at once, and Typer turns the error into exit 1 too, so the report files, the lock and its signature still to
be written were never written, and the exit code said "a finding" when there was none. Only standard output is
guarded: the reader chose to stop reading it, which loses nothing the command was asked to write to a file; the exit
code is the command's own."""

from __future__ import annotations

import os
import sys
from typing import Any, TextIO


class ReaderGoneGuard:
    """`stream` (sys.stdout), with a write or flush that finds its reader gone dropped: the stream's file descriptor
    is pointed at /dev/null, so neither what follows nor the flush at exit fails again."""

    def __init__(self, stream: TextIO) -> None:
        self._stream = stream

    def write(self, text: str) -> int:
        try:
            return self._stream.write(text)
        except BrokenPipeError:
            self._silence()
            return len(text)

    def flush(self) -> None:
        try:
            self._stream.flush()
        except BrokenPipeError:
            self._silence()

    def __getattr__(self, name: str) -> Any:  # isatty, fileno, encoding…: the stream's own
        return getattr(self._stream, name)

    def _silence(self) -> None:
        devnull = os.open(os.devnull, os.O_WRONLY)
        try:
            os.dup2(devnull, self._stream.fileno())
        finally:
            os.close(devnull)


def guard_stdout() -> None:
    """Put sys.stdout behind a ReaderGoneGuard (once; not when it is closed, None, or has no file descriptor)."""
    stream = sys.stdout
    if stream is None or isinstance(stream, ReaderGoneGuard):
        return
    try:
        stream.fileno()
    except (OSError, ValueError, AttributeError):  # a test's capture: nothing to point at /dev/null
        return
    sys.stdout = ReaderGoneGuard(stream)  # type: ignore[assignment]
