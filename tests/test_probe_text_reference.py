"""P3's paging-hint search and P2's opaque-ID measurement answer exactly what they answered before they were made
linear-time (tests/probe_text_reference.py, the code of 47a581e), on varied, large and hostile inputs; and a hostile
response of the rules' full size (200,000 characters) is measured, not left to run for seconds."""

from __future__ import annotations

import base64
import json
import random
import re
import string
import sys

import pytest

from sandbox.core.untrusted import TRUNCATION_MARK
from sandbox.run.workspace_seed import large_log_text
from scanner.probes import opaque_ids
from scanner.probes.model import MAX_RESPONSE_CHARS
from scanner.rules.paging_hint import fold, says_what_is_left
from tests import probe_text_reference as reference

UUID = "3f1c2a4e-8b7d-4c6e-9a5f-1d2e3f4a5b6c"
PHRASE_LETTERS = sorted(set("nextcursorpagetokenhasmoretruncatedremainingresultsshowingofoutoffsetuselimit"))


def _every_character() -> str:
    return "".join(chr(code) for code in range(sys.maxunicode + 1) if not 0xD800 <= code <= 0xDFFF)


def test_fold_keeps_what_ignorecase_matches_one_character_for_one() -> None:
    text = _every_character()
    folded = fold(text)
    assert len(folded) == len(text)
    for letter in PHRASE_LETTERS:  # a character folds to the letter exactly when re.IGNORECASE matches it to it
        matched = [m.start() for m in re.finditer(letter, text, re.IGNORECASE)]
        assert matched == [m.start() for m in re.finditer(letter, folded)], letter
    for cls in (r"\w", r"\d", r"[_ -]"):  # \b, \d and the separators see the same characters
        assert [m.start() for m in re.finditer(cls, text)] == [m.start() for m in re.finditer(cls, folded)], cls
    assert fold("ΣΑΣ Σ") == "σας σ" and fold("\u0130\u0131\u017f\u212a") == "iisk"  # final sigma: still letters


def _hint_fragments(rng: random.Random) -> str:
    pieces = ["next", "Next_Cursor", "next-page", "nextpage", "PAGE_token", "page token", "has more", "hasMore",
              "HAS-MORE", "cursor", "cursors", "xcursor", "_cursor", "TRUNCATED", "truncated.", "untruncated",
              "remaining", "Remaining:", "more results", "more  results", "showing 20 of 340", "Showing 1 out of 9",
              "showing of 3", "showing 2 of", "page 3 of 7", "apage 3 of 7", "page 3 of", "offset", "offsets",
              "use offset", "Use LIMIT", "use page", "use  page", "\u0130", "\u0131", "\u017f", "\u212a",
              "pa\u0130ge", "rema\u0130ning", "\u017fhowing 1 of 2", "cur\u017for", "\u0660", "\u0663",
              "showing \u0663 of \u0664", "\u00e9", "é", "_", "-", " ", "\n", "1", "22", "Σ", "Straße", "ǅ",
              TRUNCATION_MARK.replace("{n}", "12"), "x" * rng.randint(1, 40)]
    return "".join(rng.choice(pieces) for _ in range(rng.randint(0, 30)))


def test_paging_hint_search_matches_the_reference_on_varied_text() -> None:
    rng = random.Random(12)
    for _ in range(20_000):
        text = _hint_fragments(rng)
        assert says_what_is_left(text) == (reference.PAGING_HINT.search(text) is not None), text


@pytest.mark.parametrize("text", [
    large_log_text()[:MAX_RESPONSE_CHARS],
    large_log_text()[:MAX_RESPONSE_CHARS - 30] + " has more",
    "Remaining " + large_log_text()[:MAX_RESPONSE_CHARS],
    base64.b64encode(random.Random(3).randbytes(150_000)).decode(),
    "n" * MAX_RESPONSE_CHARS, "next " * 40_000, "showing 1111111111 " * 10_000, "page " * 40_000,
    "c" * MAX_RESPONSE_CHARS, "showing " + "1" * MAX_RESPONSE_CHARS + " of", "xcursor" * 28_000,
    "\u0130" * MAX_RESPONSE_CHARS, "pa\u0130ge 1 of 2".rjust(MAX_RESPONSE_CHARS, "\u0131"),
])
def test_paging_hint_search_matches_the_reference_on_large_and_hostile_text(text: str) -> None:
    assert says_what_is_left(text) == (reference.PAGING_HINT.search(text) is not None)


def _token(rng: random.Random, size: int = 24) -> str:
    return "".join(rng.choice(string.ascii_letters + string.digits) for _ in range(size))


def _id_fragments(rng: random.Random) -> str:
    hexed = "%032x" % rng.getrandbits(128)
    pieces = [UUID, UUID.upper(), hexed, hexed[:16], hexed[:15], _token(rng), _token(rng, 20), _token(rng, 19),
              "file_2024_report_final_version", "aZ3kP9qL2mX7vB1nR8tY", "ABCDEFGHIJKLMNOPQRSTUV12",
              "A1" * rng.randint(120, 132), "data:image/png;base64,", "=", "==", "+", "/", "id", "ids", "uuid:",
              "key", "sha", "hash", "token", "ref", "userId", "name", "Ana Lima", "the", "ok", "é", "ſha", "\u212aey",
              " ", "  ", "-", "_", ":", ",", "\n", "\r\n", "\r", "\x0b", "\x1c", "\u2028", "\u0085", "\t"]
    return "".join(rng.choice(pieces) for _ in range(rng.randint(0, 24)))


def _json_value(rng: random.Random, depth: int = 0) -> object:
    kind = rng.random()
    if depth > 3 or kind < 0.4:
        return _id_fragments(rng)
    if kind < 0.7:
        return [_json_value(rng, depth + 1) for _ in range(rng.randint(0, 4))]
    keys = ["id", "name", "title", "data", "blob", "mimeType", "ref", UUID, _token(rng), "text", "path"]
    return {rng.choice(keys): _json_value(rng, depth + 1) for _ in range(rng.randint(0, 4))}


def test_opaque_id_measurement_matches_the_reference_on_varied_text() -> None:
    rng = random.Random(7)
    for _ in range(2_500):
        text = _id_fragments(rng) if rng.random() < 0.5 else json.dumps(_json_value(rng))
        assert opaque_ids.opaque_ids(text) == reference.opaque_ids(text), text
        assert opaque_ids.unlabelled_id_chars(text) == reference.unlabelled_id_chars(text), text


def test_looks_random_matches_the_reference_on_ascii_and_other_tokens() -> None:
    rng = random.Random(5)
    alphabet = string.ascii_letters + string.digits + "_-" + "é٣Ⅻ"
    for size in [*range(0, 40), 200]:
        for _ in range(200):
            token = "".join(rng.choice(alphabet if rng.random() < 0.2 else alphabet[:64]) for _ in range(size))
            assert opaque_ids.looks_random(token) == reference.looks_random(token), token


def test_blanking_ids_run_by_run_matches_replacing_each_over_the_line() -> None:
    """Many IDs (past the point where each is replaced over the whole line), some inside others and overlapping."""
    rng = random.Random(9)
    for _ in range(60):
        ids = [_token(rng, rng.randint(18, 30)) for _ in range(rng.randint(100, 160))]  # as IDs are: 16+
        ids += [ids[0][2:18], ids[0] + ids[-1][:5], ids[-1][-16:] + ids[0][:16], ids[1][:16] + ids[1]]
        parts = [rng.choice(ids) if rng.random() < 0.7 else rng.choice([" ", "-", "x", "é", ":"]) for _ in range(1500)]
        line = "".join(parts)
        assert len(set(ids)) * len(line) > opaque_ids._SMALL_BLANKING  # blanked run by run
        expected = line
        for found in ids:
            expected = expected.replace(found, " ")
        assert opaque_ids._blank_ids(line, ids) == expected


def _hostile_id_lines() -> dict[str, tuple[str, int]]:
    """200,000-character responses that took the old code seconds (a quadratic overlap test and replace loop), each
    with the count the reference gives (worked out, as the reference takes too long here)."""
    rng = random.Random(1)
    tokens = " ".join(_token(rng) + "0a" for _ in range(7_600))  # every token random: the line holds only IDs
    runs = ("A1" * 127 + "B!") * 780  # 780 runs of 255 base64 characters, one short of a payload: IDs, unlabelled
    hexes = "-".join("%032x" % rng.getrandbits(128) for _ in range(6_000))  # one run, 6,000 hex IDs inside it
    return {"tokens": (tokens, 7_600 * 26), "base64 runs": (runs, 780 * 255), "hex run": (hexes, 6_000 * 32)}


@pytest.mark.parametrize("name", ["tokens", "base64 runs", "hex run"])
def test_hostile_responses_of_full_size_are_measured(name: str) -> None:
    text, expected = _hostile_id_lines()[name]
    assert len(text) >= 190_000
    assert opaque_ids.unlabelled_id_chars(text) == expected
    small = text[:12_000]  # the reference's answer, where it is quick enough to ask
    assert opaque_ids.unlabelled_id_chars(small) == reference.unlabelled_id_chars(small)
