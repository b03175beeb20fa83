"""What the conformance stage is asked to check, what it saw on the wire, and what each check concluded.

`Answer` and `Observed` are the raw facts (the probe's requests and the server's answers, and what the server sent
unasked); the checks in `checks.py` read them and nothing else. `CheckResult` and `ConformanceReport` are the
report's record of every check, so a check that passed, did not apply or could not decide says so."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field

from scanner.conformance.options import (CURRENT_REVISION, NEXT_REVISION, REVISIONS,  # noqa: F401 (re-exported)
                                         ConformanceOptions)
Outcome = Literal["violation", "passed", "inconclusive", "not-applicable"]
Transport = Literal["stdio", "http"]
NOT_CLAIMED = "the server does not claim 2026-07-28 in server/discover (see missing-server-discover)"
LEGACY_SESSION = ("the probe fell back to initialize (the stateless first request got no tools), which puts the rest "
                  "of the connection on 2025-11-25: its answers are not judged against 2026-07-28")


@dataclass(frozen=True)
class Answer:
    """One request of the probe and how the server answered it (result or error), or that it did not."""

    method: str
    result: Any = None  # the JSON-RPC result as served (untrusted)
    error: dict[str, Any] | None = None
    timed_out: bool = False
    closed: bool = False  # the server's stdout ended before an answer (over HTTP: the connection failed)
    seconds: float = 0.0
    status: int | None = None  # over HTTP: the response's status code
    request_id: int | None = None  # the JSON-RPC id the probe sent it with (stdio)

    @property
    def answered(self) -> bool:
        return self.result is not None or self.error is not None

    @property
    def code(self) -> int | None:
        code = (self.error or {}).get("code")
        return code if isinstance(code, int) and not isinstance(code, bool) else None

    @property
    def message(self) -> str:
        message = (self.error or {}).get("message")
        return message if isinstance(message, str) else ""

    def result_dict(self) -> dict[str, Any] | None:
        return self.result if isinstance(self.result, dict) else None


@dataclass
class Observed:
    """Everything the probe saw of one fresh server, in the order it asked."""

    full: bool
    capabilities: dict[str, Any] = field(default_factory=dict)  # the first session's, as listed
    first: Answer | None = None  # the stateless first request (tools/list with _meta, no initialize)
    handshake: Answer | None = None  # initialize, sent only when the first request got no tools
    discover: Answer | None = None
    resource_read: Answer | None = None  # only for a server offering resources
    lists: dict[str, Answer] = field(default_factory=dict)  # prompts/list, resources/list, ... (--spec)
    bogus_version: Answer | None = None  # tools/list declaring protocol version 2099-01-01 (--spec)
    ping: Answer | None = None  # (--spec)
    late_first: Answer | None = None  # stdio: the first request's answer, when it came after the probe gave up on it
    unasked: list[str] = field(default_factory=list)  # methods the server sent unasked, in order (bounded)
    wire: list[str] = field(default_factory=list)  # stdio: what went wrong on the wire (WireHealth.problems)
    window_seconds: float = 0.0
    first_session_notifications: list[str] = field(default_factory=list)  # methods the first session saw
    transport: Transport = "stdio"
    http: HttpObserved | None = None  # what only a Streamable HTTP target shows (--url, --spec)

    @property
    def claims_revision(self) -> bool:
        """The server names 2026-07-28 in a server/discover result."""
        result = self.discover.result_dict() if self.discover else None
        versions = result.get("supportedVersions") if result else None
        return isinstance(versions, list) and NEXT_REVISION in versions

    def answers(self) -> list[Answer | None]:
        """Every request's answer, in the order of the sequence (None: not sent)."""
        return [self.first, self.handshake, self.discover, self.resource_read, *self.lists.values(),
                self.bogus_version, self.ping]

    @property
    def cut_short(self) -> bool:
        """A request found the server gone (stdio: stdout closed; HTTP: the request failed): the probe, and its quiet
        window, did not run to the end."""
        return any(answer is not None and answer.closed for answer in self.answers())

    @property
    def legacy_session(self) -> bool:
        """The probe fell back to initialize and the server answered it: the rest of the connection runs under the
        2025-11-25 semantics initialize selects (a dual-era server's choice, for the process or the HTTP session)."""
        return self.handshake is not None and self.handshake.result_dict() is not None

    def unjudged_answers(self) -> str | None:
        """Why the server's answers are not judged against 2026-07-28 (None: they are): it does not claim the
        revision, or the probe had to open the connection with initialize."""
        if not self.claims_revision:
            return NOT_CLAIMED
        return LEGACY_SESSION if self.legacy_session else None


@dataclass(frozen=True)
class Metadata:
    """An OAuth metadata document as served (untrusted), and where it was found, said without the endpoint's path."""

    where: str  # e.g. "the origin's /.well-known/oauth-authorization-server"
    document: dict[str, Any]


@dataclass(frozen=True)
class SseSniff:
    """What a GET with `Accept: text/event-stream` got: the status, whether an SSE stream opened and its first event."""

    where: str  # "the endpoint" or "the sibling sse path" (never the URL)
    status: int | None = None
    stream: bool = False
    first_event: str | None = None  # the SSE event name of the first event in the window ("message" if unnamed)
    error: str | None = None  # why no response came (timeout, connection)


@dataclass
class HttpObserved:
    """The HTTP-only facts: the routing-header probes, the OAuth metadata lookups, the legacy-transport sniffs."""

    header_mismatch: Answer | None = None  # tools/list with Mcp-Method naming another method
    header_missing: Answer | None = None  # tools/list with MCP-Protocol-Version but no Mcp-Method
    resource_metadata: Metadata | None = None  # RFC 9728
    auth_server: Metadata | None = None  # RFC 8414 / OpenID Connect discovery
    auth_notes: list[str] = field(default_factory=list)  # why a lookup was not made or found nothing
    sniffs: list[SseSniff] = field(default_factory=list)


@dataclass(frozen=True)
class Verdict:
    """What one check concluded; a violation becomes a finding of the check's rule."""

    outcome: Outcome
    detail: str  # one line, for the report (and the finding's message, when a violation)
    evidence: str | None = None
    severity: str | None = None  # None: the rule's default


class CheckResult(BaseModel):
    model_config = ConfigDict(extra="forbid", defer_build=True)  # built on first use (scanner/report/base.py)

    check: str = Field(description="The check, by its rule name (e.g. missing-server-discover).")
    rule_id: str
    outcome: Outcome = Field(description="violation (a finding was reported), passed, inconclusive (the answer "
                             "could not decide; never a finding) or not-applicable.")
    detail: str = Field(description="What was sent and seen, one line (server text escaped, capped).")


class ConformanceReport(BaseModel):
    model_config = ConfigDict(extra="forbid", defer_build=True)  # built on first use (scanner/report/base.py)

    spec_version: str = Field(description="The revision checked against (--spec-version / --spec).")
    full: bool = Field(default=False, description="The whole suite (--spec) rather than the revision's core checks.")
    checks: list[CheckResult] = Field(default_factory=list)
    exchange: list[str] = Field(default_factory=list, description="The probe's wire log with the fresh server: one "
                                "line per message sent (->) or received (<-), capped and escaped.")
