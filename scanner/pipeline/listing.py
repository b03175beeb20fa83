"""Stage 6: talk MCP to the running server over its attached stdio: list everything it serves, run the probes in
the same session, then close the attach and read what the server left (stderr tail, exit code)."""

from __future__ import annotations

from collections.abc import Callable
from contextlib import nullcontext
from dataclasses import dataclass

import anyio

from sandbox.core.session import SandboxSession
from sandbox.core.untrusted import decode_bytes
from sandbox.run import server as run
from sandbox.run.attach import AttachedStdio
from scanner.pipeline.inventory import Inventory, Timeouts, collect
from scanner.pipeline.phase_clock import PhaseClock
from scanner.pipeline.scan_options import Progress
from scanner.pipeline.server_start import StartedServer
from scanner.pipeline.transport import WireHealth
from scanner.probes import phase as probe_phase


@dataclass(frozen=True)
class Listing:
    inventory: Inventory
    health: WireHealth
    probed: probe_phase.ProbePhaseResult
    stderr: str  # the server's stderr tail (decoded, capped, untrusted)
    stderr_truncated: bool
    exit_code: int | None
    ending: run.Ending | None = None  # how the server ended (EOF, SIGTERM, SIGKILL)


def list_and_probe(session: SandboxSession, started: StartedServer, timeouts: Timeouts, progress: Progress,
                   before_probes: Callable[[], None] | None = None, clock: PhaseClock | None = None,
                   session_ended: Callable[[Inventory, probe_phase.ProbePhaseResult], None] | None = None) -> Listing:
    """`before_probes` runs (in a thread) after the listing, beside the probes' start-up record and before the first
    probe call: the scan waits there for the second server it listed beside this one, so that server is gone before
    any call is watched.
    `session_ended` gets the listing and the probes once the MCP session is closed, before the server's end is
    waited for (the scan starts their analysis there, beside that wait)."""
    clock = clock or PhaseClock()
    server = started.server
    stdio = AttachedStdio(server.socket, stderr=server.stderr)
    health = WireHealth()
    with clock.phase("seed") if started.seeded is None else nullcontext():  # seeded in the head start: timed there
        after_listing, probed = probe_phase.make_after_listing(
            session, server, started.plan, started.restart, startup_timeout=timeouts.startup,
            request_timeout=timeouts.request, progress=progress, drain_egress=started.drain, seeded=started.seeded,
            before_probes=before_probes, health=health)
    progress("listing tools")
    try:
        inventory = anyio.run(collect, stdio, health, timeouts, server.started_at, after_listing)
    finally:
        run.close_attach(server)
        stderr, stderr_truncated = decode_bytes(bytes(stdio.stderr.data))
        stderr_truncated |= stdio.stderr.truncated
    _clock_listing(clock, inventory, probed)
    if session_ended is not None:
        session_ended(inventory, probed)
    with clock.phase("server_end"):
        code = run.exit_code(session, server.container_id)
        outcome = probed.outcome
        last = outcome.server if outcome is not None and outcome.server is not None else server
        # Closing the attach above was already EOF: "exited before" needs evidence from before it (the runner's last
        # look, or a server that exited before the session started).
        exited_before = outcome.server_exited if outcome is not None else code is not None and not inventory.connected
        ending = run.end_server(session, last, exited_before=exited_before)
    return Listing(inventory=inventory, health=health, probed=probed, stderr=stderr, stderr_truncated=stderr_truncated,
                   exit_code=code, ending=ending)


def _clock_listing(clock: PhaseClock, inventory: Inventory, probed: probe_phase.ProbePhaseResult) -> None:
    if inventory.first_answer_seconds is not None:
        clock.add("first_answer", inventory.first_answer_seconds)
    if inventory.listing_seconds is not None:
        clock.add("listing", inventory.listing_seconds)
    if probed.outcome is not None:
        clock.add("probes", probed.outcome.seconds)
