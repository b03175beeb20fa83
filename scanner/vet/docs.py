"""The `vet` rules as documentation, generated from scanner/vet/rules.toml so the README table and the V section of
docs/rules.md cannot drift from the code (tests/test_vet_docs.py compares them): `mcp-sandbox vet --rules` prints
the table."""

from __future__ import annotations

from scanner.vet.catalogue import VET_RULES
from scanner.vet.model import Tier

TABLE_START, TABLE_END = "<!-- vet-rules:start -->", "<!-- vet-rules:end -->"
DOC_START, DOC_END = "<!-- vet-rules-doc:start -->", "<!-- vet-rules-doc:end -->"


def _cell(text: str) -> str:
    return text.replace("|", "\\|").replace("\n", " ")


def markdown_table() -> str:
    rows = ["| id | tier | what it finds |", "| --- | --- | --- |"]
    rows += [f"| [`{r.id}`]({r.doc}) | {r.tier.value} | {_cell(r.title)}: {_cell(r.quote)} |" for r in VET_RULES]
    return "\n".join(rows) + "\n"


def markdown_doc() -> str:
    out = []
    for rule in VET_RULES:
        advisory = rule.tier is Tier.ADVISORY
        said = f"Per the SDK migration guide, {rule.quote}" if advisory else f"> {rule.quote}"
        out += [f"### {rule.id} ({rule.tier.value})", "", said, "", f"**Detects:** {rule.detects}", "",
                f"**Migrated form:** `{rule.after}`", "", f"{'Migration guide' if advisory else 'Specification'}: "
                f"<{rule.doc}>", ""]
    return "\n".join(out)


def section(start: str, end: str, body: str) -> str:
    return f"{start}\n{body}{end}"
