"""The published JSON Schema of the report, generated from the model.

Regenerate after changing scanner/report/model.py:  .venv/bin/python -m scanner.report.json_schema
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from scanner.report.model import SCHEMA_VERSION, Report

SCHEMA_PATH = Path(__file__).resolve().parent.parent / "schemas" / "report.schema.json"
SCHEMA_ID = f"urn:mcp-sandbox:report:v{SCHEMA_VERSION}"


def report_schema() -> dict[str, Any]:
    """JSON Schema (draft 2020-12) of the serialised Report."""
    schema = Report.model_json_schema(mode="serialization")
    return {"$schema": "https://json-schema.org/draft/2020-12/schema", "$id": SCHEMA_ID, **schema}


def schema_text() -> str:
    return json.dumps(report_schema(), indent=2, ensure_ascii=False, sort_keys=True) + "\n"


def write(path: Path = SCHEMA_PATH) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(schema_text(), encoding="utf-8")
    return path


if __name__ == "__main__":
    print(write())
