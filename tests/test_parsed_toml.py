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

WRITE_AGAIN = "write the copies again: .venv/bin/python -m scanner.rules.write_tables"


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
