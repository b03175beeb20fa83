"""P10 cloaking: the tools a server served to the scan's first session compared with those it served to a second
session that presented another client identity and protocol version (scanner/pipeline/relisting.py).

The comparison is the lock's (scanner/lock): tools paired by name, then every change of description, title, input
and output schema and annotations, and the server's instructions. Only what both protocol versions carry is compared
(COMPARED_FIELDS): a field a newer protocol revision added (`icons`, `execution`) or per-session `_meta` may differ
honestly. One finding per tool (and one for the instructions), error when the lock calls the change an error (text
the model reads changed, a tool added, a schema widened), else warning; the evidence is the change and a unified diff
of the two definitions, escaped and capped. A definition that only the other client saw was never linted: the static
rules run on it here, as they do on a definition re-listed mid-session (P8). Two listings whose compared fields are
the same JSON are not locked at all (`same_listing`): there is nothing the lock could name.
"""

from __future__ import annotations

import json
from typing import TYPE_CHECKING, Any

from sandbox.core.untrusted import cap_json, cap_text
from scanner.report.model import Finding, Severity
from scanner.rules.cloaking_order import align_order, aligned_instructions
from scanner.rules.probe import changed_definition_findings, definition_diff
from scanner.rules.registry import rule
from scanner.rules.static.changed import server_text_findings

if TYPE_CHECKING:  # the lock is imported where two listings differ: most scans never build one (`_compared`)
    from scanner.lock.changes import Change
    from scanner.lock.model import LockFile

# What a Tool carries in every protocol version the two sessions may negotiate (2025-06-18 and later).
COMPARED_FIELDS = ("name", "title", "description", "inputSchema", "outputSchema", "annotations")
EVIDENCE_CHARS = 3_000
MAX_FINDINGS = 50  # a server that cloaks 3,000 tools still gets a bounded report; the last finding says how many


def comparable(tool: dict[str, Any]) -> dict[str, Any]:
    """The part of a served definition both listings are compared on."""
    return {key: tool[key] for key in COMPARED_FIELDS if key in tool}


def listing_changes(first: list[dict[str, Any]], second: list[dict[str, Any]],
                    first_instructions: str | None, second_instructions: str | None) -> list[Change]:
    """Every change from the first listing to the second, as the lock names them (tool_added: the second client
    saw a tool the first did not)."""
    compared = _compared(first, second, first_instructions, second_instructions)
    return [] if compared is None else compared[2]


def same_listing(first: list[dict[str, Any]], second: list[dict[str, Any]]) -> bool:
    """Whether the two listings hold the same compared definitions as JSON text, keys in any order (stricter than
    the lock, which takes `1` and `1.0` for one number; `true` and `1` differ in both): then the lock can name no
    change, and building it (about 2 s of CPU for 3,000 tools) is skipped. False says nothing: the lock decides."""
    try:
        return _as_json(first) == _as_json(second)
    except (TypeError, ValueError, RecursionError):  # not plain JSON, or too deep to write: the lock decides
        return False


def cloaking_findings(first: list[dict[str, Any]], second: list[dict[str, Any]], *, first_instructions: str | None,
                      second_instructions: str | None, second_client: str) -> list[Finding]:
    """P10 per tool that differs between the listings, and the static findings a definition only the second client
    saw brings. `second_client` names the second session's identity (for the message)."""
    compared = _compared(first, second, first_instructions, second_instructions)
    if compared is None or not compared[2]:
        return []
    before, after, changes = compared
    from scanner.lock.diff import first_by_name

    old = {name: cap_json(comparable(tool.definition)) for name, tool in first_by_name(before.tools).items()}
    new = {name: cap_json(comparable(tool.definition)) for name, tool in first_by_name(after.tools).items()}
    by_tool: dict[str | None, list[Change]] = {}
    for item in changes:
        by_tool.setdefault(item.tool, []).append(item)
    findings = [_finding(tool, items, old, new, second_client) for tool, items in by_tool.items()]
    if len(findings) > MAX_FINDINGS:
        rest = len(findings) - MAX_FINDINGS + 1
        findings = [*findings[:MAX_FINDINGS - 1],
                    rule("P10").finding(None, f"{rest} more tools differ between the two listings (not shown).")]
    when = f" by a second client ({second_client})"
    return [*findings, *changed_definition_findings(old, new, when),
            *(f.model_copy(update={"message": f"{f.message} (in the instructions served{when})"})
              for f in server_text_findings(first_instructions, second_instructions))]


def _finding(tool: str | None, items: list[Change], old: dict[str, Any], new: dict[str, Any],
             second_client: str) -> Finding:
    severity = Severity.ERROR if any(item.severity == "error" for item in items) else Severity.WARNING
    what = f"Tool '{cap_text(tool, 120)}'" if tool is not None else "The server's instructions"
    message = (f"{what} differed when a second session presented another client identity ({second_client}): "
               "the server tells clients apart and may hide what it serves to others from this scan.")
    lines = [f"- {item.message}" for item in items]
    if tool is not None:
        lines.append(definition_diff(old.get(tool, {}), new.get(tool, {})))
    return rule("P10").finding(tool, message, severity=severity,
                               evidence=cap_text("\n".join(lines), EVIDENCE_CHARS))


def _compared(first: list[dict[str, Any]], second: list[dict[str, Any]], first_instructions: str | None,
              second_instructions: str | None) -> tuple[LockFile, LockFile, list[Change]] | None:
    """Both listings locked and every change between them; None when they are the same (nothing is locked). What the
    second listing only reorders (a list built from a set, in another process's hash order) is taken as the first's."""
    second, second_instructions = align_order(first, second), aligned_instructions(first_instructions,
                                                                                    second_instructions)
    if same_listing(first, second) and first_instructions == second_instructions:
        return None
    from scanner.lock.diff import tool_set_changes
    from scanner.lock.server_diff import instructions_changes

    before, after = _as_lock(first, first_instructions), _as_lock(second, second_instructions)
    return before, after, [*tool_set_changes(before, after), *instructions_changes(before.server, after.server)]


def _as_json(tools: list[dict[str, Any]]) -> str:
    return json.dumps([comparable(tool) for tool in tools], sort_keys=True, allow_nan=False)


def _as_lock(tools: list[dict[str, Any]], instructions: str | None) -> LockFile:
    from scanner.lock.build import lock_tool
    from scanner.lock.model import LockedServer, LockFile

    locked = [lock_tool(comparable(tool)) for tool in tools]
    return LockFile(server=LockedServer(instructions=instructions, instructions_known=True), tools=locked)
