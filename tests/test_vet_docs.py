"""The README table and the V section of docs/rules.md are what scanner/vet/rules.toml generates (regenerate with
`mcp-sandbox vet --rules` / scanner.vet.docs when a rule changes)."""

from __future__ import annotations

from pathlib import Path

from scanner.vet.docs import DOC_END, DOC_START, TABLE_END, TABLE_START, markdown_doc, markdown_table, section

ROOT = Path(__file__).resolve().parent.parent


def test_readme_table_is_generated() -> None:
    assert section(TABLE_START, TABLE_END, markdown_table()) in (ROOT / "README.md").read_text(encoding="utf-8")


def test_rules_doc_section_is_generated() -> None:
    assert section(DOC_START, DOC_END, markdown_doc()) in (ROOT / "docs" / "rules.md").read_text(encoding="utf-8")
