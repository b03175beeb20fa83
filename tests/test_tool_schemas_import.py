"""The scan's client imports jsonschema once a listing holds an output schema, in a thread of its own (so the first
call's check does not), and not at all for a listing without one (scanner/client/tool_schemas.py). Each case runs
in a fresh interpreter, where nothing imported jsonschema before."""

from __future__ import annotations

import subprocess
import sys

SCRIPT = """
import sys
import mcp_types
from scanner.client.tool_schemas import ToolSchemas

schemas = ToolSchemas()
tool = {"name": "t", "inputSchema": {"type": "object"}}
if sys.argv[1] == "output":
    tool["outputSchema"] = {"type": "object", "properties": {"n": {"type": "integer"}}}
before = "jsonschema" in sys.modules
schemas.absorb(mcp_types.ListToolsResult.model_validate({"tools": [tool]}), modern=False, complete=True)
if schemas.importing is not None:
    schemas.importing.join(30)
print(before, schemas.importing is not None, "jsonschema.validators" in sys.modules, "referencing" in sys.modules)
"""


def _run(case: str) -> str:
    done = subprocess.run([sys.executable, "-c", SCRIPT, case], capture_output=True, text=True, timeout=60, check=True)
    return done.stdout.split()


def test_a_listing_with_an_output_schema_imports_the_validator_in_a_thread():
    assert _run("output") == ["False", "True", "True", "True"]


def test_a_listing_without_one_imports_nothing():
    assert _run("none") == ["False", "False", "False", "False"]
