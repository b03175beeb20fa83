"""The behaviour rules B1–B6: what a tool call actually did in the sandbox, seen from outside the server.

Each rule is data (in the registry: scanner/rules/rules.toml) plus a small function over the per-call records
(`scanner.report.CallBehavior`) the probe runner builds from snapshots, process lists, cgroup counters and canaries.
All are security findings, so they feed the verdict. B2 (egress) and the network half of B1 need every call at
once (one finding per tool and host, weighed against the call's arguments): they live in scanner/rules/egress.py.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from pathlib import PurePosixPath
from typing import Any

from scanner.probes.arguments import is_annotated_read_only
from scanner.rules.egress import closed_world, egress_findings, tool_egress_findings
from scanner.probes.model import ProbeResult
from scanner.probes.tooldef import annotation, tool_name
from scanner.rules.file_kinds import (PLAIN_USER_FILE, USER_DATA, ChangedPath, StateScope, classify, home_relative,
                                      of_kind, persistence_kind)
from scanner.rules.registry import rule
from scanner.report.model import (AFTER_LAST_CALL, CallBehavior, CanaryEvent, Finding, ProcessSeen, ResourceUse,
                                  Severity)
from sandbox.core.untrusted import cap_text

CPU_BURN_SHARE = 0.5  # a timed-out call that used at least this share of the CPU quota for its whole duration
BUSY_SHARE = 0.5  # of the CPU quota, for a whole window with no call running (`busy`)
BUSY_MIN_SECONDS = 0.2  # a shorter window holds too little to tell a spinner from the looks' own work
USED_FLOOR = 0.1  # of the CPU quota, used by the sandbox itself, for its wait for a CPU to count (`demand`)
MAX_PATHS_IN_MESSAGE = 5
STARTUP = "(start-up)"


_SHELLS_AND_FETCHERS = frozenset({
    "sh", "bash", "dash", "zsh", "ash", "ksh", "fish", "busybox", "curl", "wget", "nc", "ncat", "netcat", "socat",
    "telnet", "ssh", "scp", "ftp", "tftp", "python", "python3", "perl", "ruby", "node", "php",
})

def _finding(rule_id: str, *, tool: str | None, message: str, evidence: str | None = None,
             severity: Severity | None = None) -> Finding:
    return rule(rule_id).finding(tool, cap_text(message, 1_000), severity=severity,
                                 evidence=None if evidence is None else cap_text(evidence, 1_200))


def _paths(paths: Iterable[str]) -> str:
    items = list(paths)
    shown = ", ".join(items[:MAX_PATHS_IN_MESSAGE])
    return shown + (f" and {len(items) - MAX_PATHS_IN_MESSAGE} more" if len(items) > MAX_PATHS_IN_MESSAGE else "")


def _during(record: CallBehavior) -> str:
    if record.call < 0 and record.label == AFTER_LAST_CALL:
        return "after the last call's look (before the scan ended)"
    if record.call < 0:
        return "during start-up and listing" if record.sandbox == 0 else f"during {record.label}"
    return f"during probe '{record.label}'"


# ---- B1 --------------------------------------------------------------------------------------------------------------

def check_annotations(tool: dict[str, Any] | None, record: CallBehavior,
                      scope: StateScope | None = None) -> list[Finding]:
    """B1: readOnlyHint true but files changed; destructiveHint false but files deleted or overwritten; a planted
    secret read by a tool whose annotations promise a closed, read-only world. `scope` tells the server's own state
    (file_kinds.StateScope) from the user's data."""
    if tool is None or record.call < 0:
        return []
    return [*_file_dishonesty(tool, record, scope), *_secret_dishonesty(tool, record)]


def _secret_dishonesty(tool: dict[str, Any], record: CallBehavior) -> list[Finding]:
    promise = closed_world(tool) or ("readOnlyHint: true" if is_annotated_read_only(tool) else None)
    reads = [home_relative(event.where) for event in record.canaries if event.how == "read"]
    if promise is None or not reads:
        return []
    name = tool_name(tool)
    return [_finding("B1", tool=name, message=f"Tool '{name}' read planted secrets {_during(record)} although it is "
                     f"annotated {promise}: {_paths(reads)}.")]


def _file_dishonesty(tool: dict[str, Any], record: CallBehavior, scope: StateScope | None) -> list[Finding]:
    """A read-only tool that changed the user's data is an error; one that changed only its own caches, its own state
    or git's bookkeeping an info naming them (see scanner.rules.file_kinds). A non-destructive tool is judged on the
    user data it overwrote or deleted only."""
    changed = classify(record.files, scope=scope)
    user, rest = of_kind(changed, USER_DATA), [item for item in changed if item.kind != USER_DATA]
    name = tool_name(tool)
    if is_annotated_read_only(tool) and changed:
        if not user and not record.files.truncated:
            return [_finding("B1", tool=name, severity=Severity.INFO,
                             message=f"Tool '{name}' is annotated readOnlyHint: true and {_during(record)} it changed "
                             f"no user data, only {_by_kind(rest)}.")]
        return [_finding("B1", tool=name, message=f"Tool '{name}' is annotated readOnlyHint: true but "
                         f"{_during(record)} it changed user data: {_by_change(user, record.files.truncated)}."
                         + (f" Not user data (also changed): {_by_kind(rest)}." if rest else ""))]
    overwritten = [item for item in user if item.change != "created"]
    if annotation(tool, "destructiveHint") is False and not is_annotated_read_only(tool) and overwritten:
        parts = [f"{label} {_paths(item.path for item in overwritten if item.change == change)}"
                 for label, change in (("overwrote", "modified"), ("deleted", "deleted"))
                 if any(item.change == change for item in overwritten)]
        return [_finding("B1", tool=name, message=f"Tool '{name}' is annotated destructiveHint: false but "
                         f"{_during(record)} it " + "; ".join(parts) + ".")]
    return []


def _by_change(items: list[ChangedPath], truncated: bool) -> str:
    """`created /w/a; modified /w/.git/index [the git staging area changed, ...]`: user data, by what happened."""
    parts = [f"{change} " + _paths(_with_reason(item) for item in items if item.change == change)
             for change in ("created", "modified", "deleted") if any(item.change == change for item in items)]
    if truncated:
        parts.append("more files than the record lists (the unlisted ones count as user data)")
    return "; ".join(parts)


def _with_reason(item: ChangedPath) -> str:
    return item.path if item.reason == PLAIN_USER_FILE else f"{item.path} [{item.reason}]"


def _by_kind(items: list[ChangedPath]) -> str:
    """`VCS bookkeeping [git index refreshed, ...]: modified /w/r/.git/index; tool cache [XDG cache directory]:
    created ~/.cache/x`: what is not user data, by kind and reason."""
    groups = []
    for kind, reason in sorted({(item.kind, item.reason) for item in items}, reverse=True):
        members = [item for item in items if (item.kind, item.reason) == (kind, reason)]
        groups.append(f"{kind} [{reason}]: " + ", ".join(
            f"{change} " + _paths(item.path for item in members if item.change == change)
            for change in ("created", "modified", "deleted") if any(item.change == change for item in members)))
    return "; ".join(groups)


# ---- B3 --------------------------------------------------------------------------------------------------------------

def check_canaries(record: CallBehavior) -> list[Finding]:
    """B3: a planted secret was read (atime), or appeared in a response or in egress traffic."""
    findings = []
    reads = [event.where for event in record.canaries if event.how == "read"]
    if reads:
        findings.append(_finding("B3", tool=record.tool, message=f"Planted secrets were read {_during(record)}: "
                                 f"{_paths(home_relative(where) for where in reads)}."))
    for how, words in (("response", "in the tool's response"), ("egress", "in network traffic")):
        seen = [event for event in record.canaries if event.how == how]
        if seen:
            described = _paths(f"{home_relative(event.where)}" + (f" ({event.encoding})" if event.encoding and
                               event.encoding != "plain" else "") for event in seen)
            findings.append(_finding("B3", tool=record.tool, message=f"Planted secrets appeared {words} "
                                     f"{_during(record)}: {described}."))
    return findings


def check_listing_canaries(events: list[CanaryEvent]) -> list[Finding]:
    """B3: planted secrets in what the server listed (scanner.probes.listing_secrets), which the model reads with
    every request."""
    if not events:
        return []
    described = _paths(home_relative(event.where) + (f" ({event.encoding})" if event.encoding not in (None, "plain")
                                                      else "") for event in events)
    return [_finding("B3", tool=None, message="Planted secrets appeared in what the server lists (its instructions, "
                     f"tool definitions, prompts or resources, which the model reads with every request): {described}.")]


# ---- B4 --------------------------------------------------------------------------------------------------------------

def check_persistence(record: CallBehavior) -> list[Finding]:
    """B4: writes to shell rc files, autostart, cron/systemd user units, git hooks or MCP client configs, and a
    repository's git config left with keys that run commands (its content, read after the call)."""
    hits: dict[str, list[str]] = {}
    for path in [*record.files.created, *record.files.modified]:
        kind = persistence_kind(path)
        if kind is not None:
            hits.setdefault(kind, []).append(home_relative(path))
    configs: dict[str, list[str]] = {}  # read by scanner.probes.git_config: `path: key`
    for entry in record.files.runs_commands:
        path, _, key = entry.rpartition(": ")
        configs.setdefault(home_relative(path), []).append(key)
    for path, keys in configs.items():
        hits.setdefault("git config that makes git run commands", []).append(f"{path} ({', '.join(keys[:6])})")
    return [_finding("B4", tool=record.tool, message=f"A write to a {kind} {_during(record)}: {_paths(paths)}.")
            for kind, paths in hits.items()]


# ---- B5 --------------------------------------------------------------------------------------------------------------

def program_name(args: str) -> str:
    first = args.split()[0] if args.split() else ""
    return PurePosixPath(first).name


def is_helper(process: ProcessSeen) -> bool:
    """A child the server keeps under itself that is no shell, interpreter or fetcher (GitPython's `git cat-file
    --batch`, a worker pool): it ends with the server. A daemon (outside the server's tree) never is."""
    return process.role == "server child" and program_name(process.args) not in _SHELLS_AND_FETCHERS


def check_processes(record: CallBehavior) -> list[Finding]:
    """B5: processes started during the call and still alive after it and at the next look (error for shells and
    fetchers, warning for other daemons and orphans); a helper the server keeps as its own child is an info."""
    helpers = [process for process in record.processes if is_helper(process)]
    left = [process for process in record.processes if not is_helper(process)]
    if not left:
        return [_helpers_finding(record, helpers)] if helpers else []
    names = sorted({program_name(process.args) for process in left})
    risky = [name for name in names if name in _SHELLS_AND_FETCHERS]
    severity: Severity = "error" if risky else "warning"
    evidence = "\n".join(f"{process.pid} {process.args}" for process in left[:10])
    if record.call < 0 and record.label != AFTER_LAST_CALL:  # the start-up record lists only daemons (init's)
        message = (f"{len(left)} daemon process(es) the server started at start-up outlived their "
                   f"parent (reparented to the container's init) and were running before the first call: "
                   f"{', '.join(names)}.")
    else:
        message = (f"{len(left)} process(es) started {_during(record)} were still running after it: "
                   f"{', '.join(names)}.")
    return [_finding("B5", tool=record.tool, severity=severity, message=message, evidence=evidence)]


def _helpers_finding(record: CallBehavior, helpers: list[ProcessSeen]) -> Finding:
    names = sorted({program_name(process.args) for process in helpers})
    return _finding("B5", tool=record.tool, severity=Severity.INFO, evidence="\n".join(
        f"{process.pid} {process.args}" for process in helpers[:10]), message=(
        f"{len(helpers)} helper process(es) started {_during(record)} were still running after it as the server's "
        f"own children (no shell, interpreter or fetcher; they end with the server): {', '.join(names)}."))


# ---- B6 --------------------------------------------------------------------------------------------------------------
def demand(use: ResourceUse, cpus: float, seconds: float) -> float | None:
    """The CPU time the sandbox wanted in a window of `seconds`: what it used, and what its threads waited for a CPU
    the machine's other work held. On a loaded machine a spinning thread gets a small share of a CPU and waits out
    the rest, so the time used alone would let a miner pass on a busy CI runner or a batch worker. The wait counts
    only when the sandbox used USED_FLOOR of its quota itself: on a crowded machine a burst of honest work (an
    answer to the last re-list) waits many times its own length, which is no spinner."""
    if use.cpu_seconds is None:
        return None
    waited = use.cpu_wait_seconds or 0.0
    return use.cpu_seconds + (waited if use.cpu_seconds >= USED_FLOOR * cpus * seconds else 0.0)


def busy(use: ResourceUse, cpus: float, at_least: float = BUSY_MIN_SECONDS) -> bool:
    """Whether the sandbox wanted at least BUSY_SHARE of its CPU quota for the whole window of `use` (one of
    BUSY_MIN_SECONDS or more; `demand`): after the last call's answer, with no call running, that is a thread or
    process left spinning (a miner), which answers every call at once and leaves no process for B5."""
    if use.seconds is None or use.seconds < max(at_least, 0.001):
        return False
    wanted = demand(use, cpus, use.seconds)
    return wanted is not None and wanted >= BUSY_SHARE * cpus * use.seconds


def _cpu_used(use: ResourceUse) -> str:
    """`0.42 CPU-seconds`, with the wait for a CPU when the machine's other work held it (`demand`)."""
    waited = use.cpu_wait_seconds or 0.0
    return f"{use.cpu_seconds:.2f} CPU-seconds" + (f" (and waited {waited:.2f} s more for a CPU the machine's other "
                                                   f"work held)" if waited >= 0.01 else "")


def check_resources(record: CallBehavior, result: ProbeResult | None, *, cpus: float,
                    since: CallBehavior | None = None) -> list[Finding]:
    """B6: an OOM kill, the memory or pids limit hit, the CPU quota burnt until the call timed out, or, after the
    last call, burnt with no call running (charged to `since`, the call the sandbox has been this busy since)."""
    use = record.resources
    problems = []
    if use.oom_killed:
        problems.append("the kernel killed the server for exceeding the memory limit (OOM)")
    elif use.memory_limit_hit:
        problems.append("it hit the memory limit")
    if use.pids_limit_hit:
        problems.append("it ran into the process/thread limit" + (f" ({use.pids_limit_evidence})"
                                                                  if use.pids_limit_evidence else ""))
    wanted = demand(use, cpus, result.latency_ms / 1000) if result is not None else None
    if (result is not None and result.status == "timeout" and wanted is not None and result.latency_ms > 0
            and wanted >= CPU_BURN_SHARE * cpus * result.latency_ms / 1000):
        problems.append(f"it used {_cpu_used(use)} in {result.latency_ms / 1000:.1f} s until it "
                        "timed out")
    if record.call < 0 and record.label == AFTER_LAST_CALL and busy(use, cpus):
        problems.append(f"with no call running, the sandbox used {_cpu_used(use)} in "
                        f"{use.seconds:.2f} s: a thread or process keeps the CPU busy (a miner)"
                        + (f", busy since about probe '{since.label}' of '{since.tool}'" if since else ""))
    if not problems:
        return []
    peak = f" (peak memory {use.memory_peak_bytes / 2**20:.0f} MiB)" if use.memory_peak_bytes else ""
    return [_finding("B6", tool=record.tool or (since.tool if since else None),
                     message=f"{_during(record).capitalize()}, " + "; ".join(problems) + peak + ".")]


def busy_since(records: list[CallBehavior], cpus: float) -> CallBehavior | None:
    """When the last record is the after-the-last-call one and busy (`busy`): the call a spinning thread or process
    most likely began in, the last call of its sandbox before the unbroken run of busy calls that leads to it (a
    spinner started as its call answered leaves that call's own window quiet)."""
    last = records[-1] if records else None
    if last is None or last.label != AFTER_LAST_CALL or not busy(last.resources, cpus):
        return None
    calls = [record for record in records[:-1] if record.call >= 0 and record.sandbox == last.sandbox]
    while len(calls) > 1 and busy(calls[-1].resources, cpus, at_least=0.0):
        calls.pop()
    return calls[-1] if calls else None


def evaluate_behavior(tools: list[dict[str, Any]], results: list[ProbeResult], records: list[CallBehavior], *,
                      cpus: float = 1.0, configured: tuple[str, ...] = (),
                      seeded: frozenset[str] = frozenset()) -> list[Finding]:
    """B1–B6 over every call record; one finding per rule, tool and message kind (the first call that showed it),
    and B2 (with the network half of B1) once per tool and host over all the calls. `configured`: the paths the
    launch configuration named (file_kinds.configured_paths), `seeded`: the paths the seed planted; between them
    B1 tells the server's own state from the user's data (file_kinds.StateScope)."""
    by_name = {tool_name(tool): tool for tool in tools}
    findings: list[Finding] = []
    seen: set[tuple[str, str | None, str, str]] = set()
    scope = StateScope(configured=configured, seeded=seeded)
    since = busy_since(records, cpus)
    for record in records:
        result = results[record.call] if 0 <= record.call < len(results) else None
        produced = [*check_annotations(by_name.get(record.tool or ""), record, scope), *check_canaries(record),
                    *check_persistence(record), *check_processes(record),
                    *check_resources(record, result, cpus=cpus, since=since)]
        if record.call < 0:
            produced.extend(egress_findings(record.egress, during=_during(record)))
        for finding in produced:
            key = (finding.rule_id, finding.tool, finding.severity, _kind_of(finding, _during(record)))
            if key not in seen:
                seen.add(key)
                findings.append(finding)
    findings.extend(tool_egress_findings(tools, results, records))
    return findings


def _kind_of(finding: Finding, during: str) -> str:
    """What makes two findings of one rule and tool the same problem: the message without the call it names (a
    probe label may hold colons and quotes of its own)."""
    return re.sub(r"'[^']*'", "", finding.message.replace(during, "").split(":")[0])[:120]
