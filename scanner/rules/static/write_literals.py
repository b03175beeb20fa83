"""Write S8's stored literal table (scanner/rules/static/stored_literals.py) from its detectors' patterns:

    .venv/bin/python -m scanner.rules.static.write_literals
"""

from __future__ import annotations

import json

from scanner.rules.static.s08_hidden_text import DETECTORS
from scanner.rules.static.stored_literals import TABLE, table_rows


def main() -> None:
    rows = table_rows(detector.source for detector in DETECTORS)
    TABLE.write_text(json.dumps(rows, indent=1, ensure_ascii=True) + "\n", encoding="utf-8")
    print(f"wrote {len(rows)} patterns' literals to {TABLE}")


if __name__ == "__main__":
    main()
