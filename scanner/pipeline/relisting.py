"""Stage: list the tools a second time, in a fresh server, under another client identity and protocol version.

A server can tell clients apart by the `clientInfo` and `protocolVersion` of the handshake and serve a clean
listing to what it guesses is a scanner. Just after the first server started, a second one is started from the
installed image with the same command and policy (`StartedServer.restart`: a fresh container, in the same egress
sink's namespace, with the same host name), seeded like the first (workspace, HOME canaries) and asked for its
tools and instructions by a plain `initialize` at `client_identity.ALTERNATE`'s protocol version with Cursor's
clientInfo. The scan runs this in a thread, beside the first server's listing, and waits for it before the first
probe call: the second container is removed by then, so what it tried on the network at start-up is start-up
egress (the probes' "start-up and listing" record, or "outside any probe call" without probes), never a probe
call's. scanner/rules/cloaking.py compares the two listings (P10). The session's teardown would remove the
second container anyway, and it is tracked like every other container.

A fresh container, not a second process in the first one: the first server's state (files it wrote, locks it holds)
must not make the second listing differ, and a process started with `docker exec` would share the first one's pids
limit. Listed before any probe ran, the second server is compared with the first as both start: a server that
changes its tools only once it has been called is P8's (the re-lists during the probes), not P10's.

Never raises for the server's misbehaviour or an engine failure: a second listing that could not be read returns
`Relisting.problem`, which the outcome turns into Skipped("relisting", reason), never a silent pass.
"""

from __future__ import annotations

import dataclasses
import time
from dataclasses import dataclass, field
from typing import Any

import anyio
from pydantic import ValidationError

from sandbox.core.engine import EngineTimeout
from sandbox.core.session import SandboxSession
from sandbox.run.attach import AttachedStdio
from sandbox.core.untrusted import cap_text
from scanner.client.handshake import HandshakeClient, UnsupportedVersion
from scanner.client.session import RpcError, RpcSession
from scanner.pipeline.client_identity import ALTERNATE, ClientIdentity
from scanner.pipeline.fresh_server import FreshServerError, SecondServer, fresh_server
from scanner.pipeline.inventory_model import Inventory
from scanner.pipeline.pages import paginate
from scanner.pipeline.scan_options import Progress
from scanner.pipeline.server_start import StartedServer
from scanner.pipeline.session_failures import explain, first_leaf
from scanner.pipeline.timeouts import Timeouts
from scanner.pipeline.transport import WireHealth, attached_messages

MAX_PROBLEM_CHARS = 300
LISTING = "listing tools"
# What ends the second session with its problem recorded: the server's misbehaviour (no answer in time, an error
# answer, a closed connection) or an engine call that did not answer.
RECORDED = (TimeoutError, RpcError, anyio.EndOfStream, anyio.ClosedResourceError, anyio.BrokenResourceError,
            ConnectionError, EngineTimeout)  # ConnectionError: the own client's ConnectionClosed among them
ENDINGS = (*RECORDED, ValidationError, UnsupportedVersion)  # and what the server answered that the client refused


@dataclass(frozen=True)
class Relisting:
    """The second listing: the tools and instructions as served to `identity`, or why they could not be read."""

    identity: ClientIdentity
    tools: list[dict[str, Any]] = field(default_factory=list)  # as served (uncapped, like Inventory.tools)
    instructions: str | None = None
    protocol_version: str | None = None  # the version the server answered with
    seconds: float = 0.0
    problem: str | None = None  # None when the tools were listed
    chosen: bool = False  # not made because the user turned P10 off (ScanOptions.relisting_off)
    wire: tuple[str, ...] = ()  # what went wrong on its wire short of ending it (WireHealth.problems)
    rejected: tuple[Any, ...] = ()  # the tools the MCP schema rejects, as served (bounded: MAX_REJECTED_TOOLS)

    def errors(self, first_rejected: list[Any]) -> list[str]:
        """The report's error lines for this second session: its wire problems (a second answer to tools/list that
        another client reads instead of the first, lines that are not JSON-RPC), and tools the MCP schema rejects
        that are not the first listing's (`first_rejected`, as served): P10 compares only the tools it accepts."""
        lines = [f"the second listing (as {self.identity.client}): {line}" for line in self.wire]
        if not _same_tools(list(self.rejected), first_rejected):
            lines.append(f"the second listing (as {self.identity.client}) served {len(self.rejected)} tools the MCP "
                         f"schema rejects, the first {len(first_rejected)}, not the same: P10 compares only the tools "
                         "the schema accepts, so a tool served to one client alone in a form it rejects goes "
                         "uncompared")
        return lines


def listing_problem(inventory: Inventory) -> str | None:
    """Why the first listing cannot be compared with a second one (its tools listing failed part way), if so."""
    failed = [error for error in inventory.errors if error.startswith("listing tools")]
    return f"not run: the first listing was incomplete ({failed[0]})" if failed else None


def skipped_relisting(reason: str, identity: ClientIdentity = ALTERNATE, *, chosen: bool = False) -> Relisting:
    return Relisting(identity, problem=_problem(reason), chosen=chosen)


def relist(session: SandboxSession, started: StartedServer, timeouts: Timeouts, progress: Progress,
           identity: ClientIdentity = ALTERNATE, second: SecondServer | None = None) -> Relisting:
    """Start a second server (`second`: started already, beside the first, by the head start), list its tools as
    `identity`, remove it. See the module docstring. `seconds` counts the second server's start too."""
    began = second.began if second is not None else time.monotonic()
    progress(f"listing the tools again as another client ({identity.client})")
    try:
        with fresh_server(session, started, "a second server", second) as server:
            listed = anyio.run(list_as, AttachedStdio(server.socket, stderr=server.stderr), identity, timeouts)
    except FreshServerError as exc:
        return Relisting(identity, seconds=_since(began), problem=_problem(str(exc)))
    return dataclasses.replace(listed, seconds=_since(began))


async def list_as(stdio: AttachedStdio, identity: ClientIdentity, timeouts: Timeouts) -> Relisting:
    """One session over `stdio`: `initialize` at the identity's protocol version with its clientInfo, then every
    page of tools/list. What failed is in `problem`, never raised."""
    health = WireHealth()
    step = f"connecting (initialize at {identity.protocol_version})"
    problem: str | None = None
    async with stdio:
        try:
            async with attached_messages(stdio, health) as (read, write), RpcSession(read, write) as session:
                client = HandshakeClient(session, read_timeout=timeouts.startup, page_timeout=timeouts.request,
                                         client_info=identity.implementation())
                await client.initialize(identity.protocol_version)
                step = LISTING
                tools: list[dict[str, Any]] = []
                # A cut here goes unsaid: the first listing, cut alike, made the scan incomplete already, and a
                # second listing cut where the first was not differs from it (P10).
                await paginate(client.list_tools, "tools", tools, timeouts.request)
                return Relisting(identity, tools=tools, instructions=client.instructions,
                                 protocol_version=client.protocol_version, wire=tuple(health.problems()),
                                 rejected=tuple(tool.definition for tool in health.rejected_tools))
        except ENDINGS as exc:
            problem = _ended(step, exc, health, timeouts)
        except ExceptionGroup as group:  # the transport's and the session's task groups wrap what ended it
            matched, rest = group.split(ENDINGS)
            if rest is not None or matched is None:
                raise
            problem = _ended(step, first_leaf(matched), health, timeouts)
    return Relisting(identity, problem=_problem(problem))


def _ended(step: str, exc: BaseException, health: WireHealth, timeouts: Timeouts) -> str:
    """Why the second session ended early, in one line (a page of the listing is bounded by the request timeout)."""
    if isinstance(exc, UnsupportedVersion):
        return f"{step}: {exc}"
    return explain(step, exc, health, timeouts.request if step == LISTING else timeouts.startup)


def _same_tools(ours: list[Any], theirs: list[Any]) -> bool:
    """The same definitions, in any order (a server may build its listing from a set, ordered anew by each process)."""
    return len(ours) == len(theirs) and all(ours.count(tool) == theirs.count(tool) for tool in ours)


def _problem(text: str | None) -> str:
    return cap_text(" ".join((text or "the second listing returned nothing").split()), MAX_PROBLEM_CHARS)


def _since(began: float) -> float:
    return round(time.monotonic() - began, 3)
