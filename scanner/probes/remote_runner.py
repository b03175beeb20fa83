"""The probe phase against a remote server (`scan --url`): someone's live service, not a sandbox.

Only tools annotated read-only (and not destructive as well) are called unless the user gave --allow-writes; the
error (bad-input) probes go only to read-only tools, writes or not; a read-only tool that shares its name (stripped,
casefolded) with one that is not is treated as that one. Nothing is observed from outside (no files, processes or
egress: there is no sandbox), so the outcome carries the calls and their answers (P rules), and the definition
changes after calls (P8: the tools listed again once the probes ended), never behaviour (B rules read "not
available: remote")."""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import Any

from mcp import Client
from mcp.shared.exceptions import MCPError

from sandbox.run.workspace_seed import seed_manifest
from scanner.probes.arguments import is_annotated_read_only
from scanner.probes.call_send import send_call
from scanner.probes.model import ProbeCall
from scanner.probes.model import result_not_probed
from scanner.probes.plan import CallPlan, plan_calls
from scanner.probes.relist_tools import apply_relisted, fetch_tools
from scanner.probes.runner_io import ProbeOptions, ProbeOutcome
from scanner.probes.tooldef import annotation, tool_name

Progress = Callable[[str], None]


def remote_calls(tools: list[dict[str, Any]], options: ProbeOptions, *, allow_writes: bool) -> CallPlan:
    """The plan against a live service: its calls (read-only tools' first), the tools skipped as writes, and a
    not-probed record for each tool that needs tasks or that the call budget left out."""
    manifest = seed_manifest()
    plan = plan_calls(tools, manifest, fixtures=options.fixtures, no_destructive=not allow_writes or
                      options.no_destructive, with_error_probes=False, max_calls=options.max_calls)
    writes = _write_names(tools)
    calls = [call for call in plan.calls if allow_writes or call.kind == "fixture" or _key(call.tool) not in writes]
    plan.skipped = list(dict.fromkeys([*plan.skipped, *(call.tool for call in plan.calls if call not in calls)]))
    if options.error_probes:
        read_only = plan_calls(tools, manifest, fixtures=None, no_destructive=True, with_error_probes=True,
                               max_calls=options.max_calls)
        calls.extend(call for call in read_only.calls if call.error_probe and _key(call.tool) not in writes)
    plan.calls = calls[:options.max_calls]
    plan.record_uncalled([name for name in plan.candidates if name not in plan.skipped], options.max_calls)
    return plan


def _key(name: str) -> str:
    return name.strip().casefold()


def _write_names(tools: list[dict[str, Any]]) -> set[str]:
    """The names (stripped, casefolded) of tools not annotated read-only, or annotated destructive as well (the spec
    ignores destructiveHint beside readOnlyHint: true, but a tool saying both is not one to call on someone's live
    service on its word): a read-only tool listed under one of them too (a twin, or a name differing only in case or
    spaces) is not called by it, since the call may reach the write."""
    return {_key(tool_name(tool)) for tool in tools
            if not is_annotated_read_only(tool) or annotation(tool, "destructiveHint") is True}


async def probe_remote(client: Client, tools: list[dict[str, Any]], options: ProbeOptions, *, allow_writes: bool,
                       closed: tuple[type[BaseException], ...], progress: Progress) -> ProbeOutcome:
    began = time.monotonic()
    outcome = ProbeOutcome(tools_before=list(tools), tools_after=list(tools), ran=True)
    calls = outcome.planned(remote_calls(tools, options, allow_writes=allow_writes))
    outcome.results.extend(result_not_probed(name, "not probed: not annotated read-only (or annotated destructive "
                                             "too), and the remote server is a live service (--allow-writes calls "
                                             "it)") for name in outcome.skipped)
    for number, call in enumerate(calls, start=1):
        progress(f"probing {call.tool} ({number}/{len(calls)}): {call.label}")  # cut after redaction (remote.py)
        result, _ = await send_call(client, call, options.timeout, closed, answered=(MCPError,))
        outcome.results.append(result)
        if result.status == "crashed":
            outcome.errors.append(f"probing stopped: the connection to the remote server closed during "
                                  f"'{call.label}' of '{call.tool}'; {len(calls) - number} probes were not run")
            break
    if outcome.results and not outcome.errors:
        await _relist(client, outcome, options.timeout)
    outcome.seconds = round(time.monotonic() - began, 3)
    return outcome


async def _relist(client: Client, outcome: ProbeOutcome, timeout: float) -> None:
    """P8 once the probes ended: the tools listed again and compared with the first listing (a definition changed
    after calls is a rug pull); a re-list that failed leaves P8 unchecked, which the scan says (incomplete)."""
    why: list[str] = []
    fetched = await fetch_tools(client, timeout, why=why)
    if fetched is None:
        outcome.errors.append(f"re-listing tools after the probes failed ({why[0] if why else 'no answer'}): P8 "
                              "(definitions changed after calls) went unchecked")
        return
    outcome.tools_after = apply_relisted(outcome.tools_before, fetched, outcome.findings, after_call="the probes ended")
