"""The literal text S8's patterns cannot match without (literals.required_literals), worked out once and shipped
beside the rule in `pattern_literals.json`: parsing the ~25 patterns again to find it cost every command that runs
the rules 15-25 ms. The table is keyed by each pattern's text (S8 compiles its patterns without flags), so a pattern
edited since is worked out again when first used (slower, never a wrong gate), and tests/test_rules_literals.py says
when to write the table again:

    .venv/bin/python -m scanner.write_tables
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping
from pathlib import Path

from scanner.derived_json import read_derived
from scanner.rules.static.literals import required_literals

TABLE = Path(__file__).with_name("pattern_literals.json")

Needs = tuple[tuple[str, ...], ...]


def load_table(path: Path = TABLE) -> dict[str, Needs]:
    """The stored needs by pattern text; an absent file, or one that is not JSON (a cut-off write, a merge's conflict
    markers) or not rows of a pattern and its groups of strings, is an empty table (every pattern worked out, and the
    writer that repairs it still starts)."""
    rows = read_derived(path)
    if not isinstance(rows, list) or not all(_is_row(row) for row in rows):
        return {}
    return {row["pattern"]: tuple(tuple(group) for group in row["needs"]) for row in rows}


def _is_row(row: object) -> bool:
    return (isinstance(row, dict) and isinstance(row.get("pattern"), str) and isinstance(row.get("needs"), list)
            and all(isinstance(group, list) and all(isinstance(option, str) for option in group)
                    for group in row["needs"]))


def needs_of(source: str, table: Mapping[str, Needs]) -> Needs:
    """`required_literals(re.compile(source))`, read from `table` when it holds this very pattern."""
    stored = table.get(source)
    return required_literals(re.compile(source)) if stored is None else stored


def table_rows(sources: Iterable[str]) -> list[dict[str, object]]:
    """The table's rows for these patterns (each once, in the given order), worked out from each pattern."""
    return [{"pattern": source, "needs": required_literals(re.compile(source))} for source in dict.fromkeys(sources)]
