"""The in-scan SDK gate in a real sandbox: a folder target (installed into the venv's site-packages like the zoo)
whose only module uses the v1 `mcp.server.fastmcp` import inside a function never called. Its dist-info METADATA,
read out of the installed image, declares mcp v2 (the advisory runs, as `vet PATH` runs it), v1 (held back, the
note naming the manifest) or nothing (annotated). The requirement carries a marker no Python matches, so pip installs
nothing from a registry while the METADATA still declares it (what the gate reads)."""

from __future__ import annotations

from pathlib import Path

import pytest

from scanner.report.model import Report
from tests.test_source_scan_live import _scan as scan_folder

pytestmark = pytest.mark.docker

# The module's main: a server with no tools that answers the handshake at once. One that answered nothing would hold
# each scan for the client's fixed 10 s discover and then the startup timeout, while the source stage these tests are
# about reads the image beside the run, whatever the run does.
ANSWERING_MAIN = '''

def main() -> None:
    import json
    for line in sys.stdin:
        try:
            message = json.loads(line)
        except ValueError:
            continue
        if not isinstance(message, dict) or "id" not in message or "method" not in message:
            continue
        if message["method"] == "initialize":
            answer = {"result": {"protocolVersion": message["params"]["protocolVersion"], "capabilities": {"tools": {}},
                                 "serverInfo": {"name": "quiet", "version": "0.1.0"}}}
        elif message["method"] == "tools/list":
            answer = {"result": {"tools": []}}
        else:
            answer = {"error": {"code": -32601, "message": "method not found"}}
        sys.stdout.write(json.dumps({"jsonrpc": "2.0", "id": message["id"], **answer}) + "\\n")
        sys.stdout.flush()
'''
MODULE = '''"""A server with no tools that keeps a v1 import for a code path nobody takes."""
import sys


def legacy():
    from mcp.server.fastmcp import FastMCP
    return FastMCP
''' + ANSWERING_MAIN
PROJECT = '''[build-system]
requires = ["setuptools>=68"]
build-backend = "setuptools.build_meta"

[project]
name = "gated-source"
version = "0.1.0"
dependencies = [{requires}]

[project.scripts]
gated-source = "gated_source:main"

[tool.setuptools]
py-modules = ["gated_source"]
'''


def _scan(folder: Path, requires: str) -> Report:
    (folder / "gated_source.py").write_text(MODULE)
    (folder / "pyproject.toml").write_text(PROJECT.format(requires=requires))
    return scan_folder(folder, "gated-source")


def _advisories(report: Report) -> list[str]:
    return [f.message for f in report.findings if f.rule_id == "V1" and f.message.startswith("PY_SDK_V1_")]


def test_a_v2_declaration_runs_the_advisory_and_a_v1_one_holds_it_back(tmp_path: Path) -> None:
    (tmp_path / "v2").mkdir()
    v2 = _scan(tmp_path / "v2", '"mcp>=2.1,<3; python_version < \'3\'"')
    assert v2.source is not None
    assert [m.split(" ", 1)[0] for m in _advisories(v2)] == ["PY_SDK_V1_FASTMCP"]
    assert "could not be determined" not in _advisories(v2)[0]
    assert any("Python (mcp) v2" in note for note in v2.source.notes)
    assert not any("held back" in note for note in v2.source.notes)
    (tmp_path / "v1").mkdir()
    v1 = _scan(tmp_path / "v1", '"mcp>=1.2,<2; python_version < \'3\'"')
    assert v1.source is not None and _advisories(v1) == []
    assert any("held back: the installed package's manifest declares SDK v1" in note for note in v1.source.notes)


def test_an_undeclared_sdk_runs_the_advisory_annotated(tmp_path: Path) -> None:
    report = _scan(tmp_path, "")
    assert report.source is not None
    found = _advisories(report)
    assert len(found) == 1 and "could not be determined" in found[0]
    assert any("names no MCP SDK" in note for note in report.source.notes)
