"""The input of an offline lock (`lock --from FILE`): a saved tools/list or mcp-sandbox JSON report, read by the one
tools-file reader (scanner.tools_file), then held to what a lock can pin: every definition an object, not nested
deeper than the canonical JSON can fingerprint."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any, BinaryIO

from scanner.errors import UsageError
from scanner.json_input import is_stdin
from scanner.lock.canonical import MAX_DEPTH, json_depth
from scanner.report.model import Report, ServerInfo, TargetInfo
from scanner.tools_file import WHAT, ToolsFile, json_type, load_tools_file


@dataclass(frozen=True)
class LockSource:
    report: Report
    instructions_known: bool


def load_source(path: Path | str, *, stdin: BinaryIO | None = None) -> LockSource:
    """A saved report as it is; a tools/list result as a report of its definitions."""
    parsed = load_tools_file(path, stdin=stdin)
    if parsed.report is not None:
        return LockSource(report=parsed.report, instructions_known=True)
    return LockSource(report=_report_from_listing(parsed, path), instructions_known=parsed.instructions_given)


def _report_from_listing(parsed: ToolsFile, path: Path | str) -> Report:
    name = "stdin" if is_stdin(path) else Path(path).name
    return Report(
        target=TargetInfo(kind="file", name=name, requested=str(path)),
        server=ServerInfo(name=_optional_str(parsed.server_info.get("name")),
                          version=_optional_str(parsed.server_info.get("version")),
                          protocol_version=parsed.protocol_version, capabilities=parsed.capabilities,
                          instructions=parsed.instructions),
        tools=_pinnable(parsed.tools, "tools", parsed.name),
        prompts=_pinnable(parsed.prompts, "prompts", parsed.name),
        resources=_pinnable(parsed.resources, "resources", parsed.name),
        resource_templates=_pinnable(parsed.resource_templates, "resourceTemplates", parsed.name),
    )


def _pinnable(items: list[Any], key: str, name: str) -> list[dict[str, Any]]:
    for index, item in enumerate(items):
        if not isinstance(item, dict):
            raise UsageError(f"{WHAT} {name}: `{key}[{index}]` must be an object, not {json_type(item)}")
        if json_depth(item) > MAX_DEPTH:
            raise UsageError(f"{WHAT} {name}: `{key}[{index}]` nests deeper than {MAX_DEPTH} levels, too deep to "
                             "pin; `mcp-sandbox check` reports such definitions")
    return items


def _optional_str(value: Any) -> str | None:
    return value if isinstance(value, str) else None
