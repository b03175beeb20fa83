"""The TOML files the CLI reads at start-up come from their parsed copies (scanner/parsed_toml.py) only while a copy
is of the very text beside it: the shipped copy of the rules catalogue is current and holds what tomllib reads, and
an edited TOML is parsed itself."""

from __future__ import annotations

import json
import tomllib
from importlib.resources import files
from pathlib import Path

import pytest

from scanner.parsed_toml import copy_of, read_toml, write_copy

WRITE_AGAIN = "write the copies again: .venv/bin/python -m scanner.write_tables"


@pytest.mark.parametrize("package", ["scanner.rules", "scanner.vet"])
def test_the_shipped_catalogue_copy_is_current(package: str) -> None:
    folder = files(package)
    text = folder.joinpath("rules.toml").read_text(encoding="utf-8")
    shipped = json.loads(folder.joinpath("rules.toml.parsed.json").read_text(encoding="utf-8"))
    assert shipped == copy_of(text), WRITE_AGAIN
    assert shipped["data"] == tomllib.loads(text)


def test_a_current_copy_is_read_and_a_stale_one_is_not(tmp_path: Path) -> None:
    source = tmp_path / "table.toml"
    source.write_text('[[rule]]\nid = "S1"\nwhy = """two\nlines"""\n', encoding="utf-8")
    copy = write_copy(source)
    assert copy.name == "table.toml.parsed.json"
    assert read_toml(tmp_path, "table.toml") == {"rule": [{"id": "S1", "why": "two\nlines"}]}
    # The copy is what is read: a copy of this text that says otherwise is believed (the suite keeps copies true).
    planted = json.loads(copy.read_text(encoding="utf-8"))
    planted["data"] = {"rule": [{"id": "from the copy"}]}
    copy.write_text(json.dumps(planted), encoding="utf-8")
    assert read_toml(tmp_path, "table.toml") == {"rule": [{"id": "from the copy"}]}
    # Near miss: the TOML edited after its copy was written is parsed itself.
    source.write_text('[[rule]]\nid = "S2"\n', encoding="utf-8")
    assert read_toml(tmp_path, "table.toml") == {"rule": [{"id": "S2"}]}
    copy.unlink()
    assert read_toml(tmp_path, "table.toml") == {"rule": [{"id": "S2"}]}


@pytest.mark.parametrize("broken", ["<<<<<<< HEAD\n{}\n=======\n{}\n>>>>>>> other\n", '{"sha256": "ab', "\xff"],
                         ids=["conflict-markers", "cut-off", "not-utf-8"])
def test_a_copy_that_is_not_json_is_passed_over(tmp_path: Path, broken: str) -> None:
    """A copy cut off mid-write or left with a merge's conflict markers is no copy: the TOML is parsed itself (the CLI
    and the writer that repairs the copy still start)."""
    source = tmp_path / "table.toml"
    source.write_text('[[rule]]\nid = "S1"\n', encoding="utf-8")
    copy = tmp_path / "table.toml.parsed.json"
    copy.write_bytes(b"\xff\xfe" if broken == "\xff" else broken.encode("utf-8"))
    assert read_toml(tmp_path, "table.toml") == {"rule": [{"id": "S1"}]}
    write_copy(source)  # near miss: the repaired copy is read again
    assert json.loads(copy.read_text(encoding="utf-8")) == copy_of(source.read_text(encoding="utf-8"))
    assert read_toml(tmp_path, "table.toml") == {"rule": [{"id": "S1"}]}
