"""The input of an offline lock (`lock --from FILE`): a saved tools/list or mcp-sandbox JSON report, read by the one
tools-file reader (scanner.tools_file), then held to what a lock can pin: every definition an object, not nested
deeper than the canonical JSON can fingerprint."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any, BinaryIO

from sandbox.core.untrusted import cut_by_cap
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
        return LockSource(report=_lockable(parsed.report, parsed.name), instructions_known=True)
    return LockSource(report=_report_from_listing(parsed, path), instructions_known=parsed.instructions_given)


def _lockable(report: Report, name: str) -> Report:
    """A saved report holds what a lock can pin only when its scan listed the server (a failed listing has no tools,
    which a check would read as every tool removed: info, exit 0) and nothing served was cut to fit the report (the
    report stores definitions capped; the part past a cap is gone, so a later edit there would read as no change).
    The live paths refuse the same (`scan --lock`, `lock TARGET` pin the definitions uncapped)."""
    if report.errors or not report.server.name and not report.tools:
        reason = report.errors[0] if report.errors else "the server listed nothing"
        raise UsageError(f"{WHAT} {name}: the scan did not list the server ({reason}); a lock needs a complete "
                         "listing: scan again")
    for kind, items in (("tools", report.tools), ("prompts", report.prompts), ("resources", report.resources),
                        ("resourceTemplates", report.resource_templates)):
        for index, item in enumerate(items):
            if cut_by_cap(item):
                what = item.get("name") if isinstance(item, dict) else None
                raise UsageError(f"{WHAT} {name}: `{kind}[{index}]`{f' ({what!r})' if isinstance(what, str) else ''}"
                                 " was cut to fit the report (a string over 16,384 characters, nesting deeper than "
                                 "64 levels or 10,000 items), so what was served past the cut cannot be pinned or "
                                 "checked from it: lock the live server (`mcp-sandbox scan TARGET --lock PATH`)")
    server = report.server
    if cut_by_cap([server.name, server.version, server.instructions, server.capabilities]):
        raise UsageError(f"{WHAT} {name}: the server's instructions or identity were cut to fit the report, so they "
                         "cannot be pinned or checked from it: lock the live server")
    return report


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
