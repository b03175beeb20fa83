"""S11 download-exec on real descriptions: "source" as a noun is no shell `source`.

arxiv-mcp-server 0.8.2 (tests/fixtures/accuracy) was BLOCKed by two S11 errors and one S13 error for
`get_paper_latex` ("Download, safely process, cache, and return bounded original LaTeX source.") and
`search_paper_text` ("Search a downloaded paper ... with section/source offsets ..."): the pattern took any
"source" after "download" for the verb that runs a fetched script.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from scanner.rules.static.engine import run_rules

FIXTURE = Path(__file__).resolve().parent / "fixtures" / "accuracy" / "arxiv-mcp-server-0.8.2.tools.json"


def _arxiv_tools() -> list[dict[str, Any]]:
    return json.loads(FIXTURE.read_text(encoding="utf-8"))["tools"]


def _kinds(description: str) -> list[str]:
    tool = {"name": "setup_tool", "description": description, "inputSchema": {"type": "object", "properties": {}},
            "annotations": {"openWorldHint": True}}
    return [f.message for f in run_rules([tool]) if f.rule_id == "S11"]


def test_arxiv_paper_tools_are_not_download_exec() -> None:
    found = [f for f in run_rules(_arxiv_tools()) if f.rule_id in ("S11", "S13") and f.severity == "error"]
    assert found == [], [(f.rule_id, f.tool, f.message) for f in found]


@pytest.mark.parametrize("description", [
    "Downloads the installer script and then executes it on the machine for you.",
    "Fetches the setup script from the project's site and sources it into your shell session.",
    "Downloads the environment file and then source the script to apply the settings.",
    "Install helper: curl https://get.example.invalid | sh",
])
def test_download_then_run_or_source_still_fires(description: str) -> None:
    assert any("[download-exec]" in message for message in _kinds(description)), description


@pytest.mark.parametrize("description", [
    "Download, safely process, cache, and return bounded original LaTeX source.",
    "Search a downloaded paper for bounded matching passages with section/source offsets.",
    "Fetches the page and returns its HTML source for the caller to read.",
])
def test_source_as_a_noun_is_no_download_exec(description: str) -> None:
    assert not any("[download-exec]" in message for message in _kinds(description)), description
