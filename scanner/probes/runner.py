"""The probe phase: call every tool in the sandbox and watch what each call does. Runs in the MCP session the inventory
opened (`inventory.collect(..., after_listing=...)`). Each planned call: tools/call with a timeout → exit state,
snapshot (files, cgroup counters), processes and egress drain (call_looks) → diff → re-list (relister: after every call,
or every k-th for a big listing; once more after the last). A hung call is cancelled; if the server then no longer
answers a ping, or if it died, the call is recorded (P7 / P6) and a fresh sandbox is started from the installed image
for the rest (sent first the suspects of a crash: crash_replay)."""

from __future__ import annotations

import time
from collections.abc import Awaitable, Callable
from contextlib import AsyncExitStack
from functools import partial
from typing import Any

import anyio

from sandbox.run import observe, server as run
from sandbox.run.attach import AttachedStdio
from sandbox.run.observe import ObserveError, Process, Snapshot
from sandbox.run.observer_watch import Watch
from sandbox.run.process_watch import pids_in_use
from scanner.client.scan_client import ScanClient
from scanner.pipeline.inventory import scan_client
from scanner.pipeline.transport import WireHealth
from scanner.probes.call_looks import Looks, look_after_call, note_observer_gaps, taken
from scanner.probes.call_behavior import (drop_exited, fill_record, new_processes, noteworthy, pids_at_limit,
                                          look_last, reads_after, reads_at_baseline)
from scanner.probes.crash_attribution import EXIT_AFTER_ANSWER_SECONDS, Answered, finished_at, recent
from scanner.probes.crash_replay import Undecided, charged_crash, late_exit
from scanner.probes.egress_windows import EgressWindows, canaries_in_response
from scanner.probes.git_config import check_git_configs
from scanner.probes.process_tree import daemons
from scanner.probes.sandbox_state import has_exited, process_roles
from scanner.probes.harvest import harvest
from scanner.probes.id_reuse import IdPool, fill_from_pool
from scanner.probes.call_send import answers, named_fault, send_call
from scanner.probes.model import ProbeCall, ProbeResult, is_refused, result_crashed, with_refused_answer
from scanner.probes.plan import plan_calls
from scanner.probes.relist_tools import Tools
from scanner.probes.relister import Relister
from scanner.probes.runner_io import ProbeOptions, ProbeOutcome, SandboxAccess, seed
from scanner.probes.session_wire import ProbeSessions
from scanner.probes.tooldef import tool_name
from scanner.rules.probe_crashes import timeout_finding
from scanner.report.model import AFTER_LAST_CALL, CallBehavior, Finding, ProcessSeen, ResourceUse

__all__ = ["ProbeOptions", "ProbeOutcome", "ProbeRunner", "SandboxAccess", "seed"]

PING_TIMEOUT = 2.0
MAX_RESTARTS = 5

Progress = Callable[[str], None]


class ProbeRunner:
    def __init__(self, access: SandboxAccess, options: ProbeOptions, baseline: Snapshot | None,
                 progress: Progress = lambda _: None, watch: Watch | None = None) -> None:
        self.access = access
        self.options = options
        self.progress = progress
        self.outcome = ProbeOutcome()
        self.server = access.server
        self.client: ScanClient | None = None
        self.sandbox_index, self.last_snapshot = 0, baseline
        self.watch = watch or Watch(access.docker, access.server.container_id, unavailable="not started")
        self.last_processes: set[int] | None = None
        self.current_tools: list[dict[str, Any]] = []  # the last listing, as served
        self.restart_needed, self.suspect_restarts = False, 0  # restarts after a suspect sent again stopped one
        self.health = access.health or WireHealth()  # of the session in use; each restart has its own, said at the end
        self.ids = IdPool()  # identifiers this session's results held, for later calls (id_reuse)
        self.answered: list[Answered] = []  # this server's recent answers (P6 attribution: crash_attribution)
        self.undecided: Undecided | None = None  # a crash its suspects, sent again to the next server, decide
        self.server_pid: int | None = None  # the server's host pid in this sandbox (B5 tells its children by it)
        self.relists = Relister(self.outcome.findings, self.outcome.errors)  # P8: when to re-list, what failed
        # each drained egress attempt goes to the record of the call the sink accepted it during
        self.windows = EgressWindows(self.outcome.behavior, access.canaries.locations, self.outcome.errors)
        self.sandbox_began = float("-inf")  # this sandbox's start-up window opens here (a restart: when it began)
        self._stack = AsyncExitStack()

    # ---- the phase ---------------------------------------------------------------------------------------------------

    async def run(self, client: ScanClient, tools: list[dict[str, Any]],
                  before_first_call: Callable[[], Awaitable[None]] | None = None) -> ProbeOutcome:
        """Every planned call; `before_first_call` is awaited beside the start-up record (its looks watch this sandbox)."""
        began = time.monotonic()
        self.client = client
        self.current_tools = list(tools)
        self.outcome.tools_before = list(tools)
        self.outcome.ran, self.sessions = True, ProbeSessions.listed_by(self.health)  # the listing's wire, read
        try:
            async with anyio.create_task_group() as group:
                if before_first_call is not None:
                    group.start_soon(before_first_call)
                await self._startup_record()
            plan = plan_calls(tools, self.access.manifest, fixtures=self.options.fixtures,
                              no_destructive=self.options.no_destructive,
                              with_error_probes=self.options.error_probes, max_calls=self.options.max_calls)
            planned = self.outcome.planned(plan)
            for number, call in enumerate(planned, start=1):
                if not await self._ready(len(planned) - number + 1):
                    break
                self.progress(f"probing {call.tool} ({number}/{len(planned)}): {call.label}"[:120])
                await self._call(call)
            if not self.restart_needed and self.answered:  # a server that ended after the last call answered
                self._charge(await late_exit(self.answered, self.access.docker, self.server.container_id,
                                             lambda: run.stderr_tail(self.server)))
            if self.undecided is not None:  # the last call noticed it: a server for its suspects
                await self._ready(0)
            if not self.restart_needed and self.client is not None and self.outcome.results:  # Relister.last
                await self._last_looks()
        finally:
            self.relists.finish()
            if self.undecided is not None:  # probing ended before its suspects could be sent again
                self.outcome.findings.append(self.undecided.unreproduced(sent_again=False))
            self.outcome.teardown_processes = await process_roles(self.access.docker, self.server.container_id)
            if self.outcome.teardown_processes:
                self._settle_processes({p.pid for p in self.outcome.teardown_processes})
            self.outcome.server = self.server
            self.outcome.server_exited = await has_exited(self.access.docker, self.server.container_id)
            self.outcome.looks.extend(self.watch.finish())
            await self._drain_egress(settled=True)  # the last calls' connections the sink logged late
            self.windows.finish()
            await self._stack.aclose()
            self.outcome.errors.extend(self.sessions.errors(self.outcome.errors))
            self.outcome.tools_after = list(self.current_tools)
            self.outcome.seconds = round(time.monotonic() - began, 3)
        return self.outcome

    # ---- one call ----------------------------------------------------------------------------------------------------

    async def _call(self, call: ProbeCall) -> None:
        assert self.client is not None
        index = len(self.outcome.results)
        if self.last_snapshot is None:  # the last look failed: the canaries opened since are its call's
            self.last_snapshot = await self._snapshot()
            reads_after(self.outcome.behavior, self.sandbox_index, self.last_snapshot, self.access.canaries.locations)
        before = self.last_snapshot
        if self.last_processes is None:
            self.last_processes = {p.pid for p in await self._processes()}
        timeout = self.options.timeout
        call = fill_from_pool(call, self._definition(call.tool), self.ids)
        record = CallBehavior(call=index, tool=call.tool, label=call.label, sandbox=self.sandbox_index)
        sent_at = time.time()
        self.windows.open(record, sent_at)
        result = await self._send(call, record)
        answered = time.time()
        beside = self._relist_beside(result)  # a re-list due after this call, fetched beside its looks
        looks = await look_after_call(self.access.docker, self.server.container_id, self.access.drain_egress,
                                      self.watch, relist=beside)
        state = looks.state
        if state.running:  # a sandbox that stopped took its observer with it: the restart starts a fresh one
            note_observer_gaps(self.watch, call, self.outcome.errors)
        if not state.running:
            result = await self._crashed(call, result, state, record, sent_at)
        else:
            if result.status == "timeout":
                self.outcome.findings.append(timeout_finding(call.tool, call.label, timeout_s=timeout))
            await self._observe_after(record, before, looks)
            state = state if record.observed else await anyio.to_thread.run_sync(
                observe.exit_state, self.access.docker, self.server.container_id)
            if not state.running:  # it exited right after answering, while the scanner looked
                result = await self._crashed(call, result, state, record, sent_at)
            elif result.status in ("timeout", "crashed") and not await answers(self.client, PING_TIMEOUT):
                self.restart_needed = True
        self.windows.place(looks.egress, pending=record)
        self.outcome.results.append(result)
        self.outcome.behavior.append(record)
        if result.status != "crashed":  # answered, or timed out and still answering: a suspect of a later crash
            self.answered = [*recent(self.answered, answered), Answered(call, answered)]
        if self.restart_needed:
            if looks.tools is not None:  # re-listed beside the looks, from the server before it is replaced
                self._apply_relist(looks.tools, after_call=f"probe '{call.label}' of tool '{call.tool}'")
            self.relists.cadence.drop()
            return
        due = self.relists.cadence.after(f"probe '{call.label}' of tool '{call.tool}'", tools=len(self.current_tools),
                                         notifications=self.outcome.list_changed_notifications)
        if due is not None and beside is not None:
            self._apply_relist(looks.tools, after_call=due)
        elif due is not None:
            await self._relist(after_call=due)

    async def _crashed(self, call: ProbeCall, result: ProbeResult, state: observe.ExitState, record: CallBehavior,
                       sent_at: float) -> ProbeResult:
        """P6 for the call that stopped the server (scanner.probes.crash_attribution), or its suspects held."""
        tail = run.stderr_tail(self.server)
        finished = await anyio.to_thread.run_sync(finished_at, self.access.docker, self.server.container_id)
        if result.status != "crashed":
            result = result_crashed(call, result, f"the server exited with code {state.exit_code}\n{tail}")
        self._charge(charged_crash(self.answered, call, sent_at, finished, exit_code=state.exit_code, stderr_tail=tail))
        record.observed = False
        record.resources = ResourceUse(oom_killed=state.oom_killed)
        return result

    def _charge(self, charged: Finding | Undecided | None) -> None:
        """A crash's P6, or the crash held for its suspects (None: no crash); the next probe needs a fresh server."""
        if isinstance(charged, Undecided):
            self.undecided = charged
        elif charged is not None:
            self.outcome.findings.append(charged)
        self.restart_needed = self.restart_needed or charged is not None

    async def _send(self, call: ProbeCall, record: CallBehavior) -> ProbeResult:
        """tools/call; what came back (the canaries searched in the whole answer), or why nothing did (named_fault)."""
        assert self.client is not None
        sent, wire = await send_call(self.client, call, self.options.timeout)
        answer = wire if wire is not None else self.health.last_call_answer if is_refused(sent) else None
        canaries_in_response(record, sent.answer_texts(answer), self.access.canaries.locations)
        result = with_refused_answer(sent, self.health.last_call_answer)
        if wire is not None and result.status == "ok":
            self.ids.add(harvest(wire, call.tool))
        return named_fault(call, result, self.health.fault)  # a restarted session's fault is said at the end

    def _definition(self, name: str) -> dict[str, Any] | None:
        return next((tool for tool in self.current_tools if tool_name(tool) == name), None)

    async def _observe_after(self, record: CallBehavior, before: Snapshot, looks: Looks | None = None) -> None:
        """Diff against `before`: the snapshot and process list of `looks` (the call's other looks), or taken now."""
        try:
            after = await self._snapshot() if looks is None else taken(looks.snapshot)
            now = await self._processes() if looks is None else taken(looks.processes)
        except ObserveError as exc:
            record.observed = False
            self.outcome.errors.append(f"could not observe probe '{record.label}' of '{record.tool}': {exc}"[:300])
            self.last_snapshot = None
            self.last_processes = None
            await self._pids_evidence_without_look(record, str(exc))
            return
        pids_now = await self._pids_in_use() if after.failed or before.failed else None
        fill_record(record, before, after, self.access.canaries.locations, pids_now)
        await check_git_configs(self.access.docker, self.server.container_id, record, self.outcome)
        self._settle_processes({p.pid for p in now})
        record.processes = new_processes(now, (self.last_processes or set()) | self.watch.own_pids(), self.server_pid)
        self.last_snapshot = None if after.failed else after
        self.last_processes = {p.pid for p in now}
        hit = record.resources.pids_limit_hit and record.call >= 0
        if hit and pids_now is None:  # the observer looks without forking: can anything in the sandbox still fork?
            pids_now = await self._pids_in_use()
        if (after.failed or hit) and pids_now is not None and pids_now[0] >= pids_now[1] and record.call >= 0:
            self.restart_needed = True  # nothing can fork in this sandbox any more: the next probes get a fresh one

    def _settle_processes(self, alive: set[int]) -> None:
        """The previous record of this sandbox keeps only the processes still alive at this look (B5)."""
        if self.outcome.behavior and self.outcome.behavior[-1].sandbox == self.sandbox_index:
            drop_exited(self.outcome.behavior[-1], alive)

    async def _pids_evidence_without_look(self, record: CallBehavior, error: str) -> None:
        """The look itself was refused: the engine's stats at the pids limit make that refusal evidence."""
        evidence = pids_at_limit(await self._pids_in_use(), error)
        if evidence is not None:
            record.resources = record.resources.model_copy(update={"pids_limit_hit": True,
                                                                   "pids_limit_evidence": evidence})
            self.restart_needed = True

    async def _drain_egress(self, pending: CallBehavior | None = None, *, settled: bool = False) -> None:
        """B2: the egress attempts logged since the last drain, each into its call's record (egress_windows);
        `pending`: the start-up record being filled, which its caller keeps or not; `settled`: the engine asked too."""
        if self.access.drain_egress is None:
            return
        try:
            drain = partial(self.access.drain_egress, self.server.container_id, settled=settled)
            events = await anyio.to_thread.run_sync(drain)
        except Exception as exc:  # noqa: BLE001 - the sink failing loses evidence, it must not stop probing
            events = exc
        self.windows.place(events, pending)

    async def _startup_record(self) -> None:
        """What the server did before the first probe (start-up, listing; a restarted one's too): no call's."""
        label = "start-up and listing" if self.sandbox_index == 0 else f"start-up after restart {self.sandbox_index}"
        record = CallBehavior(call=-1, tool=None, label=label, sandbox=self.sandbox_index)
        self.windows.open(record, self.sandbox_began)
        found: dict[str, list[ProcessSeen]] = {}
        async with anyio.create_task_group() as group:  # two looks with no order between them, taken at once
            if self.last_snapshot is not None:  # the baseline, and a canary read between its planting and it
                reads_at_baseline(record, self.last_snapshot, self.access.canaries.locations)
                group.start_soon(self._observe_after, record, self.last_snapshot)
            group.start_soon(self._roles_into, found)
        # The server's own tree at start-up is not "left running"; a daemon (reparented to init) is.
        roles = found["roles"]
        self.server_pid = next((p.pid for p in roles if p.role == "server"), None)
        if self.sandbox_index == 0:
            self.outcome.startup_processes = roles
        record.processes = daemons(roles)
        await self._drain_egress(pending=record)
        if noteworthy(record, self.access.cpus):
            self.outcome.behavior.append(record)

    async def _last_looks(self) -> None:
        """The last re-list, and beside it one more look: what the server did after the last call's look is seen."""
        record = CallBehavior(call=-1, tool=None, label=AFTER_LAST_CALL, sandbox=self.sandbox_index)
        async with anyio.create_task_group() as group:
            group.start_soon(partial(self._relist, after_call=self.relists.last(self.outcome.list_changed_notifications)))
            if self.last_snapshot is not None:  # none: the last look failed, and the scan says so (unseen_files)
                group.start_soon(look_last, self._observe_after, record, self.last_snapshot)
        if noteworthy(record, self.access.cpus):
            self.outcome.behavior.append(record)

    # ---- the sandbox -------------------------------------------------------------------------------------------------

    async def _snapshot(self) -> Snapshot:
        return await anyio.to_thread.run_sync(self.watch.snapshot)

    async def _processes(self) -> list[Process]:
        return await anyio.to_thread.run_sync(self.watch.processes)

    async def _roles_into(self, found: dict[str, list[ProcessSeen]]) -> None:
        found["roles"] = await process_roles(self.access.docker, self.server.container_id)

    async def _pids_in_use(self) -> tuple[int, int] | None:
        return await anyio.to_thread.run_sync(pids_in_use, self.access.docker, self.server.container_id)

    async def _ready(self, remaining: int) -> bool:
        """A server for the `remaining` probes: restarted, sent an undecided crash's suspects first (crash_replay)."""
        while self.restart_needed:
            if self.outcome.restarts - self.suspect_restarts >= MAX_RESTARTS:
                if remaining:
                    self.outcome.errors.append(f"probing stopped after {MAX_RESTARTS} restarts of the server; "
                                               f"{remaining} probes were not run")
                return False
            if not await self._restart():
                return False
            if self.undecided is not None:
                await self._send_suspects(self.undecided)
                self.undecided = None  # decided (an exception on the way leaves it to `run`'s last word)
                self.suspect_restarts += self.restart_needed  # not counted: at most one per planned call
                if not remaining:
                    return not self.restart_needed
        return True

    async def _send_suspects(self, undecided: Undecided) -> None:
        """A crash's suspects, each given EXIT_AFTER_ANSWER_SECONDS after its answer: the first to stop it is P6's."""
        for suspect in undecided.suspects:
            self.progress(f"probing {suspect.tool} again, to tell which call stopped the server"[:120])
            crashes = sum(finding.rule_id == "P6" for finding in self.outcome.findings)
            await self._call(undecided.again(suspect))
            if self.restart_needed:  # it crashed this server too (that crash's P6 names it), or left it unusable
                if crashes == sum(finding.rule_id == "P6" for finding in self.outcome.findings):
                    self.outcome.findings.append(undecided.unusable(suspect))
                return
            await anyio.sleep(EXIT_AFTER_ANSWER_SECONDS)
            if await has_exited(self.access.docker, self.server.container_id):
                return self._charge(undecided.stopped_by(suspect))
            self.answered = []  # it outlived the window: no suspect of a later crash
        self.outcome.findings.append(undecided.unreproduced(sent_again=True))

    async def _restart(self) -> bool:
        """Stop the old sandbox and start a fresh one from the installed image, seeded, with a new MCP session."""
        self.restart_needed = False
        self.outcome.restarts += 1
        self.ids.clear()  # a fresh server knows none of the old session's ids
        self.answered, self.health = [], self.sessions.new()
        self.progress("restarting the server in a fresh sandbox")
        await anyio.to_thread.run_sync(observe.kill, self.access.docker, self.server.container_id)
        self.sandbox_began = time.time()  # what the old sandbox tried until it was killed is its last call's
        self.outcome.looks.extend(self.watch.finish())
        try:
            server = await anyio.to_thread.run_sync(self.access.restart)
            self.server = server
            self._stack.callback(run.close_attach, server)  # the listing stage ends it (EOF, SIGTERM, SIGKILL)
            self.watch, self.last_snapshot = await anyio.to_thread.run_sync(seed, self.access, server,
                                                                            self.options.observer)
            self.last_processes = None
            stdio = AttachedStdio(server.socket, stderr=server.stderr)
            await self._stack.enter_async_context(stdio)
            client = scan_client(stdio, self.health, self.access.startup_timeout, self.on_message)
            # The client's own read timeout bounds the handshake: its task group must not sit in a scope of ours.
            await self._stack.enter_async_context(client)
        except Exception as exc:  # noqa: BLE001 - the restart failing ends probing, not the scan
            why, self.client = self.health.fault or f"{type(exc).__name__}: {exc}", None  # no server to talk to now
            self.outcome.errors.append(f"restarting the server for the remaining probes failed: {why}"[:600])
            return False
        self.client = client
        self.sandbox_index += 1
        await self._relist(after_call="the restart")
        await self._startup_record()  # the fresh server's start-up traffic and files are no call's
        return True

    # ---- definitions -------------------------------------------------------------------------------------------------

    async def on_message(self, message: Any) -> None:
        """Every Client's message handler: notifications by method; tools/list_changed counted once probing runs."""
        if self.outcome.notifications.note(message) and self.outcome.ran:
            self.outcome.list_changed_notifications += 1

    async def _fetch_tools(self) -> Tools | None:
        assert self.client is not None
        return await self.relists.fetch(self.client, self.access.request_timeout)

    def _relist_beside(self, result: ProbeResult) -> Callable[[], Awaitable[Tools | None]] | None:
        """The re-list to fetch beside an answered call's looks when one is due after every call (relist_cadence)."""
        beside = result.status not in ("timeout", "crashed") and self.relists.beside_every_call(len(self.current_tools))
        return self._fetch_tools if beside else None

    async def _relist(self, *, after_call: str) -> None:
        self._apply_relist(await self._fetch_tools(), after_call=after_call)

    def _apply_relist(self, fetched: Tools | None, *, after_call: str) -> None:
        """P8: the tools re-listed (None: the re-list failed) against the tools in use (relist_tools)."""
        self.current_tools = self.relists.apply(self.current_tools, fetched, after_call=after_call)
        self.sessions.relisted(self.health)  # the tools the page lost to the schema (session_wire)
