"""Adapt the sandbox's attached stdio (lines of bytes) to the scanner's own client's streams of JSON-RPC messages
(`attached_messages`; scanner/client).

Each line is read by the scanner's tolerant reader (scanner/pipeline/wire_reader.py), not the SDK's JSON parser, so a
valid message nested ~100 levels deep is a message, not noise. Stdout lines that are not JSON-RPC are counted and
sampled as evidence; past a limit the server is flooding stdout and the session ends with that reason instead of
spinning forever, as it does at a line too deep, or too wide for the models to check (wire_reader.TooMany). The ids
of tools/list requests in flight are tracked so their answers are screened tool by tool: a tool the SDK's model
rejects is kept aside in WireHealth (`rejected_tools`) instead of losing the whole page. Answers the client drops
unread (a second one to a request, one to an id never sent) are counted there too (`stray_answers`).
"""

from __future__ import annotations

import json
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from dataclasses import dataclass, field
from typing import Any

import anyio
import mcp_types
from anyio.streams.memory import MemoryObjectReceiveStream, MemoryObjectSendStream

from sandbox.run.attach import AttachedStdio, StreamFault
from sandbox.core.untrusted import cap_text
from scanner.client.session import as_sent
from scanner.pipeline.wire_reader import MAX_TYPED_VALUES, Message, RejectedTool, TooDeep, TooMany, read_line

MAX_NOISE_LINES = 200
MAX_NOISE_BYTES = 1024 * 1024
NOISE_SAMPLES = 5
MAX_REJECTED_TOOLS = 100


@dataclass
class WireHealth:
    """What went wrong on the wire, for the report: stdout noise and the reason the stream ended early."""

    noise_lines: int = 0
    noise_bytes: int = 0
    noise_samples: list[str] = field(default_factory=list)
    fault: str | None = None
    messages: int = 0
    rejected_tools: list[RejectedTool] = field(default_factory=list)  # taken off tools/list pages (bounded)
    rejected_count: int = 0  # all of them, kept or not
    # The result of the last tools/call answered, as sent (before any client refused it): what a probe call whose
    # answer the client refused still has its canaries and sizes read from (the probes send one call at a time).
    last_call_answer: dict[str, Any] | None = None
    # Answers the client dropped unread: a second answer to a request, or one to an id it never sent. A client that
    # matches ids otherwise (the first answer not the last, "3" not taken for 3) reads what the scan did not.
    stray_answers: int = 0
    first_stray: str | None = None

    def note_stray(self, answer_id: Any, why: str) -> None:
        self.stray_answers += 1
        if self.first_stray is None:
            self.first_stray = f"id {cap_text(json.dumps(answer_id), 60)}, {why}"

    def problems(self) -> list[str]:
        """What went wrong on this session's wire that the session itself did not end with, one line each, for the
        report's errors: stdout lines that are not JSON-RPC, answers the client dropped unread."""
        lines = []
        if self.noise_lines:
            lines.append(cap_text(f"the server wrote {self.noise_lines} non-JSON-RPC lines to stdout "
                                  f"(first: {' | '.join(self.noise_samples)})", 1000))
        if self.stray_answers:
            lines.append(f"the server sent {self.stray_answers} answers the scan did not read, each a second answer "
                         f"to a request or one to an id never sent (first: {self.first_stray}); a client that "
                         "matches answers to requests otherwise reads what this scan did not")
        return lines

    def note_rejected(self, rejected: tuple[RejectedTool, ...]) -> None:
        self.rejected_count += len(rejected)
        self.rejected_tools.extend(rejected[:max(MAX_REJECTED_TOOLS - len(self.rejected_tools), 0)])

    def note_noise(self, line: bytes) -> None:
        self.noise_lines += 1
        self.noise_bytes += len(line)
        if len(self.noise_samples) < NOISE_SAMPLES:
            self.noise_samples.append(cap_text(line[:400].decode("utf-8", errors="replace"), 200))
        if self.noise_lines > MAX_NOISE_LINES or self.noise_bytes > MAX_NOISE_BYTES:
            self.fault = (
                f"the server flooded stdout with {self.noise_lines} lines ({self.noise_bytes} bytes) that are not "
                "JSON-RPC; MCP stdio servers must write only protocol messages to stdout"
            )


@dataclass
class _Pending:
    """The requests whose answers the transport reads itself: tools/list pages in flight (screened tool by tool) and
    the last tools/call (its result kept as sent in WireHealth.last_call_answer; the probes send one at a time)."""

    tools_list_ids: set[str | int] = field(default_factory=set)
    call_id: str | int | None = None
    unanswered: set[int] = field(default_factory=set)  # every request sent and not answered yet, late or not
    answered_ids: set[int] = field(default_factory=set)

    def sent(self, message: mcp_types.JSONRPCMessage, health: WireHealth) -> None:
        if isinstance(message, mcp_types.JSONRPCRequest) and isinstance(message.id, int):
            self.unanswered.add(message.id)
        if isinstance(message, mcp_types.JSONRPCRequest) and message.method == "tools/list":
            self.tools_list_ids.add(message.id)
        elif isinstance(message, mcp_types.JSONRPCRequest) and message.method == "tools/call":
            self.call_id, health.last_call_answer = message.id, None  # an earlier call unanswered is abandoned

    def answered(self, message: mcp_types.JSONRPCMessage, health: WireHealth) -> None:
        if not isinstance(message, (mcp_types.JSONRPCResponse, mcp_types.JSONRPCError)):
            return
        self._matched(message, health)
        self.tools_list_ids.discard(message.id)  # type: ignore[arg-type]
        if isinstance(message, mcp_types.JSONRPCResponse) and self.call_id is not None and message.id == self.call_id:
            self.call_id, health.last_call_answer = None, message.result

    def _matched(self, message: mcp_types.JSONRPCResponse | mcp_types.JSONRPCError, health: WireHealth) -> None:
        """The answer's request, matched as the client matches it (session.as_sent); a stray answer noted. An error
        with a null id (a request the server could not read) answers none, and hides no result."""
        if message.id is None:
            return
        request_id = as_sent(message.id)
        if request_id in self.unanswered:
            self.unanswered.discard(request_id)
            self.answered_ids.add(request_id)
        else:
            health.note_stray(message.id, "answered again" if request_id in self.answered_ids else "never sent")


@asynccontextmanager
async def attached_messages(stdio: AttachedStdio, health: WireHealth) -> AsyncIterator[
        tuple[MemoryObjectReceiveStream[mcp_types.JSONRPCMessage | Exception],
              MemoryObjectSendStream[mcp_types.JSONRPCMessage]]]:
    """The attached stdio as streams of JSON-RPC messages, for the scanner's own client (scanner/client): every line
    the server writes read by the tolerant reader (noise counted, a flood or a line too deep or too wide ends the
    stream with its reason in `health`); what the client sends written as one line."""
    read_in, read_out = anyio.create_memory_object_stream[mcp_types.JSONRPCMessage | Exception](16)
    write_in, write_out = anyio.create_memory_object_stream[mcp_types.JSONRPCMessage](16)
    pending = _Pending()

    async def server_to_client() -> None:
        async with read_in:
            async for item in stdio.lines:
                if isinstance(item, StreamFault):
                    health.fault = item.reason
                    return
                if not item.strip():
                    continue
                read = read_line(item, pending.tools_list_ids)
                if isinstance(read, TooDeep):
                    health.fault = (f"the server wrote a message ({len(item)} bytes) nested deeper than the reader's "
                                    "bound of about 1,000 levels")
                    return
                if isinstance(read, TooMany):
                    health.fault = (f"the server wrote a message ({len(item)} bytes) holding more than "
                                    f"{MAX_TYPED_VALUES:,} JSON values outside schemas, structured content, _meta "
                                    "and data, the reader's bound")
                    return
                if not isinstance(read, Message):
                    health.note_noise(item)
                    if health.fault:
                        return
                    continue
                health.messages += 1
                if read.rejected_tools:
                    health.note_rejected(read.rejected_tools)
                pending.answered(read.message, health)
                await read_in.send(read.message)

    async def client_to_server() -> None:
        async with write_out:
            async for message in write_out:
                pending.sent(message, health)
                data = message.model_dump_json(by_alias=True, exclude_unset=True)
                try:
                    await stdio.send(data.encode() + b"\n")
                except (anyio.BrokenResourceError, anyio.ClosedResourceError, ConnectionError):
                    health.fault = health.fault or "the server's stdin closed"
                    await read_in.aclose()
                    return

    async with anyio.create_task_group() as tg:
        tg.start_soon(server_to_client)
        tg.start_soon(client_to_server)
        try:
            yield read_out, write_in
        finally:
            tg.cancel_scope.cancel()
