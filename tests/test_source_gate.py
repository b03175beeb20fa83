"""The in-scan SDK gate (scanner/pipeline/source_gate.py) over manifest bytes as the image gives them: the same
decision `vet PATH` makes, v2 declared (advisories run), v1 declared (held back, saying why), nothing declared
(annotated); and without a manifest the advisories stay held back with the reason."""

from __future__ import annotations

import json

from scanner.pipeline.source_gate import decide
from scanner.vet.sources import vet_sources

PY_V1_CODE = b"def legacy():\n    from mcp.server.fastmcp import FastMCP\n    return FastMCP\n"
TS_V1_CODE = b"import { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';\nexport const s = McpServer;\n"


def _metadata(*requires: str) -> dict[str, bytes]:
    lines = "".join(f"Requires-Dist: {r}\n" for r in requires)
    return {"METADATA": f"Metadata-Version: 2.1\nName: pkg\nVersion: 1.0\n{lines}".encode()}


def _ids(files: dict[str, bytes], found: dict[str, bytes]) -> tuple[list[str], list[str]]:
    gate = decide(found)
    result = vet_sources(files, gates=gate.gates, held_why=gate.why)
    return [f.rule_id for f in result.findings], [*gate.said, *result.notes]


def test_a_v2_declaration_runs_the_python_advisories_and_v1_holds_them_back() -> None:
    ids, notes = _ids({"pkg/m.py": PY_V1_CODE}, _metadata("mcp>=2.1,<3"))
    assert ids == ["PY_SDK_V1_FASTMCP"] and any("v2 (advisories active)" in n for n in notes)
    ids, notes = _ids({"pkg/m.py": PY_V1_CODE}, _metadata("mcp>=1.2,<2"))
    assert ids == [] and any("held back: the installed package's manifest declares SDK v1" in n for n in notes)


def test_an_undeclared_sdk_annotates_and_no_manifest_holds_back() -> None:
    gate = decide(_metadata("httpx"))
    result = vet_sources({"pkg/m.py": PY_V1_CODE}, gates=gate.gates, held_why=gate.why)
    assert [f.rule_id for f in result.findings] == ["PY_SDK_V1_FASTMCP"]
    assert "could not be determined" in result.findings[0].message
    none = decide({})
    assert none.gates is None and "could not be read" in none.why
    held = vet_sources({"pkg/m.py": PY_V1_CODE}, gates=none.gates, held_why=none.why)
    assert held.findings == [] and "could not be read" in held.notes[0]


def test_package_json_gates_the_typescript_advisories() -> None:
    v2 = {"package.json": json.dumps({"dependencies": {"@modelcontextprotocol/server": "^2.0.0",
                                                       "@modelcontextprotocol/sdk": "^1.20.0"}}).encode()}
    v1 = {"package.json": json.dumps({"dependencies": {"@modelcontextprotocol/sdk": "^1.20.0"}}).encode()}
    assert any(i.startswith("TS_SDK_V1_") for i in _ids({"pkg/index.ts": TS_V1_CODE}, v2)[0])
    assert not any(i.startswith("TS_SDK_V1_") for i in _ids({"pkg/index.ts": TS_V1_CODE}, v1)[0])
