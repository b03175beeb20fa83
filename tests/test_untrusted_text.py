"""The one untrusted-text module: each escape shows every hiding or terminal-changing character, and keeps the form
its callers stored before (reports, the lock, the job summary and the install's egress records read the same)."""

from __future__ import annotations

import pytest

from sandbox.core.untrusted import (
    cap_text,
    escape_for_terminal,
    escape_host,
    escape_invisible,
    escape_to_ascii,
    visible_escape,
)

HOSTILE = "a\x1b[31mb\x07\r\n\t\u202eé\U000e0072\u2028\x85 z"


def test_visible_escape_widths() -> None:
    assert [visible_escape(ch) for ch in ("\x00", "\x85", "\u202e", "\U000e0072")] == [
        "\\x00", "\\x85", "\\u202e", "\\U000e0072"]


def test_terminal_escape_names_the_common_controls_and_keeps_printable_unicode() -> None:
    assert escape_for_terminal(HOSTILE) == "a\\e[31mb\\a\\r\\n\\t\\u202eé\\U000e0072\\u2028\\x85 z"
    assert escape_for_terminal("x" * 10, limit=4) == "xxxx" + "…[truncated 6 chars]"


def test_terminal_escape_shows_letters_drawn_as_nothing() -> None:
    """A Hangul filler, the combining grapheme joiner or a braille blank hides a gap in a word as a zero-width space
    does (S8 warns of them); the terminal shows each as its escape, and keeps marks and other scripts' letters."""
    assert escape_for_terminal("ig\u3164nore \u034fx\u2800y") == "ig\\u3164nore \\u034fx\\u2800y"
    assert escape_for_terminal("café 日本語 \u0301") == "café 日本語 \u0301"  # near miss: letters and a mark kept


def test_invisible_escape_is_numeric_only_and_covers_lone_surrogates() -> None:
    assert escape_invisible(HOSTILE) == "a\\x1b[31mb\\x07\\x0d\\x0a\\x09\\u202eé\\U000e0072\\u2028\\x85 z"
    assert escape_invisible("\ud800") == "\\ud800"
    # issue 11: a lone surrogate cannot be written to any UTF-8 stream, so the terminal view escapes it too
    assert escape_for_terminal("a\ud800b") == "a\\ud800b"


def test_ascii_escape_keeps_only_printable_ascii() -> None:
    assert escape_to_ascii("left-pad 1.0 é\x00\u202e\U0001f600") == "left-pad 1.0 \\xe9\\x00\\u202e\\U0001f600"


def test_host_escape_escapes_space_and_keeps_its_two_digit_form() -> None:
    assert escape_host("two words.invalid") == "two\\x20words.invalid"
    assert escape_host("\x7f\u263a") == "\\x7f\\x263a"


@pytest.mark.parametrize("escape", [escape_for_terminal, escape_invisible, escape_to_ascii, escape_host])
def test_no_escape_lets_a_terminal_or_bidi_control_through(escape) -> None:  # type: ignore[no-untyped-def]
    shown = escape(HOSTILE)
    assert not any(ch in shown for ch in ("\x1b", "\x07", "\r", "\n", "\u202e", "\U000e0072", "\u2028", "\x85"))


def test_cap_text_says_how_much_was_cut() -> None:
    assert cap_text("abcdef", 6) == "abcdef"
    assert cap_text("abcdefgh", 6) == "abcdef…[truncated 2 chars]"
