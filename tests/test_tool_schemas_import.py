"""jsonschema is imported before the first call, beside its wait, when a probed tool has an output schema, and never
by a scan that calls nothing (scanner/client/tool_schemas.py, scanner/probes/phase.py)."""

from __future__ import annotations

import subprocess
import sys

import anyio

from scanner.client.tool_schemas import checks_results
from scanner.probes.phase import _before_first_call

WITH_OUTPUT = [{"name": "a", "inputSchema": {"type": "object"}},
               {"name": "b", "inputSchema": {"type": "object"}, "outputSchema": {"type": "object"}}]
WITHOUT = [{"name": "a", "inputSchema": {"type": "object"}}, {"name": "b", "inputSchema": {"type": "object"},
                                                             "annotations": {"outputSchema": {}}}]


def test_results_are_checked_only_for_a_tool_with_an_output_schema():
    assert checks_results(WITH_OUTPUT)
    assert not checks_results(WITHOUT) and not checks_results([])


def test_the_wait_before_the_first_call_imports_the_validator_then_waits():
    done: list[str] = []
    before = _before_first_call(WITH_OUTPUT, lambda: done.append("waited"))
    assert before is not None
    anyio.run(before)
    assert done == ["waited"] and "jsonschema.validators" in sys.modules and "referencing" in sys.modules
    assert _before_first_call(WITHOUT, None) is None


SCRIPT = """
import sys
from scanner.probes.phase import _before_first_call
import anyio
before = _before_first_call(__import__("json").loads(sys.argv[1]), lambda: None)
anyio.run(before)
print("jsonschema.validators" in sys.modules)
"""


def test_without_an_output_schema_nothing_imports_jsonschema():
    """In a fresh interpreter, where nothing imported it before."""
    import json

    done = subprocess.run([sys.executable, "-c", SCRIPT, json.dumps(WITHOUT)], capture_output=True, text=True,
                          timeout=60, check=True)
    assert done.stdout.split() == ["False"]
    done = subprocess.run([sys.executable, "-c", SCRIPT, json.dumps(WITH_OUTPUT)], capture_output=True, text=True,
                          timeout=60, check=True)
    assert done.stdout.split() == ["True"]
