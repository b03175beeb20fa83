"""A string property's description offers a value (a quoted example, a spelled-out format): the generated probe uses
it, so the call is one the tool accepts (mcp-server-time answered every probe with an error: "notes" is no timezone,
and the code behind the check was never watched). Only plain text is taken from the server's description."""

from __future__ import annotations

import time
from typing import Any

import pytest

from sandbox.run.workspace_seed import seed_manifest
from scanner.probes.described_values import described_value
from scanner.probes.value_generation import NO_PROCESS_PID, generate_arguments

TIMEZONE = ("IANA timezone name (e.g., 'America/New_York', 'Europe/London'). Use 'Etc/UTC' as local timezone if no "
            "timezone provided by the user.")


def prop(description: str) -> dict[str, Any]:
    return {"type": "string", "description": description}


@pytest.mark.parametrize(("description", "value"), [
    (TIMEZONE, "America/New_York"),
    ("The unit, for example \"celsius\".", "celsius"),
    ("A ticker symbol such as `AAPL`", "AAPL"),
    ("Example: 'en-GB'", "en-GB"),
    ("Time to convert in 24-hour format (HH:MM)", "09:30"),
    ("When, as YYYY-MM-DD", "2024-01-15"),
])
def test_a_described_example_or_format_is_the_value(description: str, value: str) -> None:
    assert described_value(prop(description)) == value


@pytest.mark.parametrize("description", [
    "IANA timezone name, like America/New_York",  # not quoted: no telling where it ends
    "A page, e.g. 'https://docs.example.invalid/x'",  # a URL
    "A host, e.g. 'mirror.example.invalid'",  # a dotted name: a host
    "Where, e.g. '/etc/passwd'",  # a path from the root
    "Who, e.g. 'ana@example.invalid'",  # an address
    "A name; 'quoted' but offered as no example",
])
def test_what_is_not_plain_text_or_not_offered_is_no_value(description: str) -> None:
    assert described_value(prop(description)) is None


def test_the_generated_probe_of_a_time_server_is_one_it_accepts() -> None:
    tool = {"name": "convert_time", "inputSchema": {"type": "object", "required": ["source_timezone", "time"],
                                                    "properties": {"source_timezone": prop(TIMEZONE),
                                                                   "time": prop("Time in 24-hour format (HH:MM)")}}}
    assert generate_arguments(tool, seed_manifest()) == {"source_timezone": "America/New_York", "time": "09:30"}


def test_names_with_values_of_their_own_keep_them() -> None:
    """A pid, a URL or a path keeps the value that hits no process, leaves for .invalid or stays in the sandbox."""
    schema = {"type": "object", "required": ["pid", "url", "path"],
              "properties": {"pid": prop("The process, e.g. '1'"), "url": prop("e.g. 'localhost'"),
                             "path": prop("A file, e.g. 'notes'")}}
    arguments = generate_arguments({"name": "kill_process", "inputSchema": schema}, seed_manifest())
    assert arguments["pid"] == str(NO_PROCESS_PID)
    assert arguments["url"].endswith(".invalid/index.html")
    assert arguments["path"] != "notes"


def test_a_huge_description_is_searched_only_at_its_start() -> None:
    assert described_value(prop("x" * 5_000 + " e.g. 'celsius'")) is None


@pytest.mark.parametrize("gap", [" ", "\n", " : ( "])
def test_a_description_of_long_blank_runs_is_searched_in_linear_time(gap: str) -> None:
    """The server's text: three `\\s*` side by side made "e.g." and 2,000 spaces cost 15 s per property."""
    began = time.monotonic()
    assert described_value(prop("e.g." + gap * (1_990 // len(gap)) + "x")) is None
    assert described_value(prop("for example" + " " * 1_900 + "'celsius'")) == "celsius"
    assert time.monotonic() - began < 1.0
