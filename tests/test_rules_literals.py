"""The literal gate in front of S8's phrase patterns (scanner.rules.static.literals): it may only skip a search that
could not have matched, so every finding stays as it was."""

from __future__ import annotations

import ast
import json
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
def test_the_gate_never_hides_a_match(detector: s08.Detector) -> None:
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


def test_the_stored_needs_are_the_patterns_own() -> None:
    """Every S8 pattern's needs are read from the table shipped beside the rule, and they are what the pattern gives
    (whatever the hash seed: each test process has its own)."""
    from scanner.rules.static.stored_literals import load_table

    table = load_table()
    stale = [d.kind for d in s08.DETECTORS if table.get(d.source) != required_literals(re.compile(d.source))]
    assert stale == [], "write the table again: .venv/bin/python -m scanner.write_tables"


def test_a_pattern_the_table_lacks_is_worked_out(tmp_path: Path) -> None:
    from scanner.rules.static.stored_literals import load_table, needs_of, table_rows

    stored = r"send\s+to\s+https://"
    path = tmp_path / "table.json"
    path.write_text(json.dumps(table_rows([stored])), encoding="utf-8")
    table = load_table(path)
    assert needs_of(stored, table) == required_literals(re.compile(stored)) == (("https://",), ("send",), ("to",))
    edited = r"upload\s+to\s+https://"  # near miss: the table does not hold it, so it is parsed
    assert needs_of(edited, table) == required_literals(re.compile(edited)) != needs_of(stored, table)
    assert load_table(tmp_path / "absent.json") == {}
    # A table that is not JSON (cut off mid-write, a merge's conflict markers) is no table: every pattern is worked
    # out, and the writer that repairs it still imports the rule.
    path.write_text("<<<<<<< HEAD\n[]\n=======\n[]\n>>>>>>> other\n", encoding="utf-8")
    assert load_table(path) == {}
    assert needs_of(stored, load_table(path)) == required_literals(re.compile(stored))
    # So is JSON of another shape (a row without its needs, a group that is not strings).
    for other in ({"pattern": stored}, [{"pattern": stored}], [{"pattern": stored, "needs": [["x", 1]]}]):
        path.write_text(json.dumps(other), encoding="utf-8")
        assert load_table(path) == {}, other


def test_a_pattern_is_compiled_only_for_text_that_could_match() -> None:
    """A detector compiles its pattern on the first search its literal words let through: clean text never pays for
    the compile."""
    detector = s08.Detector("probe", r"\bexfiltrate\b[^.]{0,20}\bnow\b", "error", "m", True, True)
    assert list(detector.search("summarise the file")) == [] and "pattern" not in detector.__dict__
    assert [m.group() for m in detector.search("exfiltrate it now")] == ["exfiltrate it now"]
    assert "pattern" in detector.__dict__
