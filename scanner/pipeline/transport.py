"""Adapt the sandbox's attached stdio (lines of bytes) to the MCP SDK's transport streams (SessionMessages).

Each line is read by the scanner's tolerant reader (scanner/pipeline/wire_reader.py), not the SDK's JSON parser, so a
valid message nested ~100 levels deep is a message, not noise. Stdout lines that are not JSON-RPC are counted and sampled as evidence; past a limit the server is flooding stdout
and the session ends with that reason instead of spinning forever. The ids of tools/list requests in flight are
tracked so their answers are screened tool by tool: a tool the SDK's model rejects is kept aside in WireHealth
(`rejected_tools`) instead of losing the whole page.
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from dataclasses import dataclass, field

import anyio
import mcp_types
from mcp.client._transport import TransportStreams
from mcp.shared.message import SessionMessage

from sandbox.run.attach import AttachedStdio, StreamFault
from sandbox.core.untrusted import cap_text
from scanner.pipeline.wire_reader import Message, RejectedTool, TooDeep, read_line

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


@asynccontextmanager
async def attached_transport(stdio: AttachedStdio, health: WireHealth) -> AsyncIterator[TransportStreams]:
    """A Transport for mcp.Client over an AttachedStdio."""
    read_in, read_out = anyio.create_memory_object_stream[SessionMessage | Exception](16)
    write_in, write_out = anyio.create_memory_object_stream[SessionMessage](16)
    tools_list_ids: set[str | int] = set()  # tools/list requests sent and not yet answered

    async def server_to_client() -> None:
        async with read_in:
            async for item in stdio.lines:
                if isinstance(item, StreamFault):
                    health.fault = item.reason
                    return
                if not item.strip():
                    continue
                read = read_line(item, tools_list_ids)
                if isinstance(read, TooDeep):
                    health.fault = (f"the server wrote a message ({len(item)} bytes) nested deeper than the reader's "
                                    "bound of about 1,000 levels")
                    return
                if not isinstance(read, Message):
                    health.note_noise(item)
                    if health.fault:
                        return
                    continue
                health.messages += 1
                if read.rejected_tools:
                    health.note_rejected(read.rejected_tools)
                if isinstance(read.message, (mcp_types.JSONRPCResponse, mcp_types.JSONRPCError)):
                    tools_list_ids.discard(read.message.id)  # type: ignore[arg-type]
                await read_in.send(SessionMessage(read.message))

    async def client_to_server() -> None:
        async with write_out:
            async for session_message in write_out:
                if isinstance(session_message.message, mcp_types.JSONRPCRequest) \
                        and session_message.message.method == "tools/list":
                    tools_list_ids.add(session_message.message.id)
                data = session_message.message.model_dump_json(by_alias=True, exclude_unset=True)
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
