"""The literal gate in front of S8's phrase patterns (scanner.rules.static.literals): it may only skip a search that
could not have matched, so every finding stays as it was."""

from __future__ import annotations

import ast
import random
import re
from pathlib import Path

import pytest

from scanner.rules.static import s08_hidden_text as s08
from scanner.rules.static.literals import could_match, required_literals
from tests.fuzz_inputs import HOSTILE_TEXT


def test_literal_runs_branches_and_repeats_are_required() -> None:
    needs = required_literals(re.compile(r"\bsend\b[^.]{0,9}(?:data|files?)\s+to\s+(?:https?|ftp)://"))
    assert {frozenset(group) for group in needs} >= {frozenset({"send"}), frozenset({"data", "file"}),
                                                     frozenset({"to"}), frozenset({"://"})}
    assert needs[0] == ("://",)  # the rarest first: clean text is turned away by one substring test
    assert could_match(needs, "send the data to https://x.invalid")
    assert not could_match(needs, "send the data to the server")  # near miss: no `://`, no search


def test_optional_and_case_insensitive_parts_add_nothing() -> None:
    assert required_literals(re.compile(r"(?:secret)?x")) == (("x",),)
    assert required_literals(re.compile(r"ab", re.IGNORECASE)) == ()
    assert required_literals(re.compile(r"(?:abc|[xy])")) == ()  # one alternative needs no literal: no group
    assert could_match((), "anything")


def _corpus() -> list[str]:
    """Every string literal of the test suite (the rules' firing cases and near misses among them), hostile text,
    and random mixes of them."""
    strings: set[str] = set(HOSTILE_TEXT)
    for path in Path(__file__).parent.rglob("*.py"):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.Constant) and isinstance(node.value, str) and 3 < len(node.value) < 3_000:
                strings.add(node.value)
    ordered = sorted(strings)
    rng = random.Random(12)
    return ordered + [" ".join(rng.choice(ordered) for _ in range(rng.randint(2, 4))) for _ in range(3_000)]


@pytest.mark.parametrize("detector", s08.PHRASES, ids=lambda d: d.kind)
def test_the_gate_never_hides_a_match(detector: s08._Detector) -> None:
    """Wherever the pattern matches, the gate lets it search (and it does fire on the corpus at all for most)."""
    missed = [text for text in map(s08._normalised, _corpus())
              if detector.pattern.search(text) and not could_match(detector.needs, text)]
    assert missed == []
    assert detector.needs, f"{detector.kind}: the gate derived no literal; every text would be searched"


def test_the_character_class_covers_every_suspect_character() -> None:
    missing = [hex(cp) for cp in range(0x110000) if not 0xD800 <= cp <= 0xDFFF
               and s08.ANY_SUSPECT_CHAR.match(chr(cp) + "x") and not s08.SUSPECT_CHAR_CLASS.match(chr(cp))]
    assert missing == []
    assert s08._has_suspect_char("a\rb") and not s08._has_suspect_char("a\r\nb")
