"""The probe phase against a remote server (`scan --url`): someone's live service, not a sandbox.

Only tools annotated read-only are called unless the user gave --allow-writes; the error (bad-input) probes go only
to read-only tools, writes or not. Nothing is observed from outside (no files, processes or egress: there is no
sandbox), so the outcome carries the calls and their answers (P rules), and the definition changes after calls (P8),
never behaviour (B rules read "not available: remote")."""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import Any

from mcp import Client
from mcp.shared.exceptions import MCPError

from sandbox.run.workspace_seed import seed_manifest
from scanner.probes.call_send import send_call
from scanner.probes.model import ProbeCall
from scanner.probes.model import result_not_probed
from scanner.probes.plan import NEEDS_TASKS, plan_calls
from scanner.probes.runner_io import ProbeOptions, ProbeOutcome

Progress = Callable[[str], None]


def remote_calls(tools: list[dict[str, Any]], options: ProbeOptions, *, allow_writes: bool) -> tuple[
        list[ProbeCall], list[str], list[str]]:
    """The calls (read-only tools' first), the tools skipped as writes, and those that need tasks."""
    manifest = seed_manifest()
    plan = plan_calls(tools, manifest, fixtures=options.fixtures, no_destructive=not allow_writes or
                      options.no_destructive, with_error_probes=False, max_calls=options.max_calls)
    calls = list(plan.calls)
    if options.error_probes:
        read_only = plan_calls(tools, manifest, fixtures=None, no_destructive=True, with_error_probes=True,
                               max_calls=options.max_calls)
        calls.extend(call for call in read_only.calls if call.error_probe)
    return calls[:options.max_calls], plan.skipped, plan.needs_tasks


async def probe_remote(client: Client, tools: list[dict[str, Any]], options: ProbeOptions, *, allow_writes: bool,
                       closed: tuple[type[BaseException], ...], progress: Progress) -> ProbeOutcome:
    began = time.monotonic()
    outcome = ProbeOutcome(tools_before=list(tools), tools_after=list(tools), ran=True)
    calls, outcome.skipped, needs_tasks = remote_calls(tools, options, allow_writes=allow_writes)
    outcome.results.extend(result_not_probed(name, NEEDS_TASKS) for name in needs_tasks)
    outcome.results.extend(result_not_probed(name, "not probed: not annotated read-only, and the remote server is "
                                             "a live service (--allow-writes calls it)") for name in outcome.skipped)
    for number, call in enumerate(calls, start=1):
        progress(f"probing {call.tool} ({number}/{len(calls)}): {call.label}"[:120])
        result, _ = await send_call(client, call, options.timeout, closed, answered=(MCPError,))
        outcome.results.append(result)
        if result.status == "crashed":
            outcome.errors.append(f"probing stopped: the connection to the remote server closed during "
                                  f"'{call.label}' of '{call.tool}'; {len(calls) - number} probes were not run")
            break
    outcome.seconds = round(time.monotonic() - began, 3)
    return outcome
