"""Standard output whose reader went away (`mcp-sandbox check t.json --sarif r.sarif | head -1`): the rest of what
goes there is dropped, and the command carries on.

Left alone, the first write after the reader closed the pipe raises BrokenPipeError (EPIPE): rich's console then
exits 1 at once, and Typer turns the error into exit 1 too, so the report files, the lock and its signature still to
be written were never written, and the exit code said "a finding" when there was none. Standard error is guarded the
same way (`2>&1 | head -1`, or the terminal view on stderr beside `--json -`). The reader chose to stop reading,
which loses nothing the command was asked to write to a file; the exit code is the command's own.

A terminal whose encoding is not UTF-8 (LC_ALL=C with Python's UTF-8 coercion off, a Latin-1 locale) cannot show
every character of a report (`…`, a server's own text): such a character is written as a backslash escape, not an
internal error (exit 3) in the middle of the terminal view with the report files still unwritten."""

from __future__ import annotations

import os
import sys
from typing import Any, TextIO


class ReaderGoneGuard:
    """`stream` (sys.stdout or sys.stderr), with a write or flush that finds its reader gone dropped: the stream's
    file descriptor is pointed at /dev/null, so neither what follows nor the flush at exit fails again."""

    def __init__(self, stream: TextIO) -> None:
        self._stream = stream

    def write(self, text: str) -> int:
        try:
            return self._stream.write(text)
        except BrokenPipeError:
            drop_the_rest(self._stream)
            return len(text)

    def flush(self) -> None:
        try:
            self._stream.flush()
        except BrokenPipeError:
            drop_the_rest(self._stream)

    def __getattr__(self, name: str) -> Any:  # isatty, fileno, encoding…: the stream's own
        return getattr(self._stream, name)


def drop_the_rest(stream: TextIO) -> None:
    """Point `stream`'s file descriptor at /dev/null: its reader has gone."""
    devnull = os.open(os.devnull, os.O_WRONLY)
    try:
        os.dup2(devnull, stream.fileno())
    finally:
        os.close(devnull)


def write_utf8(text: str) -> None:
    """`text` on stdout as UTF-8 whatever its encoding (a report on stdout is the same bytes as in a file: JSON is
    UTF-8, and an ASCII terminal's escapes would not be valid JSON); a reader gone drops the rest."""
    stream = sys.stdout
    if is_utf8(stream) or getattr(stream, "buffer", None) is None:  # a test's capture: text only
        stream.write(text)
        return
    try:
        stream.flush()
        stream.buffer.write(text.encode("utf-8"))
        stream.buffer.flush()
    except BrokenPipeError:
        drop_the_rest(stream)


def is_utf8(stream: TextIO) -> bool:
    return str(getattr(stream, "encoding", "") or "").lower().replace("_", "-") in ("utf-8", "utf8")


def guard_stdout() -> None:
    """Put sys.stdout and sys.stderr behind a ReaderGoneGuard each, and escape what their encoding cannot show."""
    for text_stream in (sys.stdout, sys.stderr):
        _escape_unencodable(text_stream)
    sys.stdout = _guarded(sys.stdout)  # type: ignore[assignment]
    sys.stderr = _guarded(sys.stderr)  # type: ignore[assignment]


def _guarded(stream: TextIO | None) -> TextIO | None:
    """`stream` behind a ReaderGoneGuard (once; not when it is closed, None, or has no file descriptor)."""
    if stream is None or isinstance(stream, ReaderGoneGuard):
        return stream
    try:
        stream.fileno()
    except (OSError, ValueError, AttributeError):  # a test's capture: nothing to point at /dev/null
        return stream
    return ReaderGoneGuard(stream)  # type: ignore[return-value]


def _escape_unencodable(stream: TextIO | None) -> None:
    reconfigure = getattr(stream, "reconfigure", None)  # a real text stream's; a test's capture has none
    if stream is not None and reconfigure is not None and not is_utf8(stream):
        reconfigure(errors="backslashreplace")
