"""The JSON files derived from a source and shipped beside it (a catalogue's parsed copy, S8's literal table, the
root help's command summaries): read as None when absent, unreadable or not JSON (a cut-off write, a merge's
conflict markers), so that the caller falls back on the source; written whole or not at all
(`python -m scanner.write_tables`)."""

from __future__ import annotations

import json
from importlib.resources.abc import Traversable
from pathlib import Path
from typing import Any


def read_derived(path: Traversable) -> Any | None:
    """The file's JSON, or None when there is none to read."""
    try:
        return json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None


def write_derived(path: Path, data: Any) -> None:
    from scanner.atomic_write import atomic_write_bytes  # the writer's only: start-up reads

    text = json.dumps(data, indent=1, ensure_ascii=False) + "\n"
    atomic_write_bytes(path, text.encode("utf-8"), durable=False)
