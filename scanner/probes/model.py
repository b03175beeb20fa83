"""One probe call: what is sent (ProbeCall), and the record of it (ProbeResult): what came back, how long it took and
roughly what it costs an agent."""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field

from scanner.tokens import text_tokens as estimate_tokens  # the one estimate: 4 characters ≈ 1 token
from sandbox.core.untrusted import cap_json, cap_text

ProbeKind = Literal["generated", "fixture", "error"]
CallStatus = Literal["ok", "tool_error", "protocol_error", "timeout", "crashed", "not_probed"]
ErrorProbeKind = Literal["missing_required", "wrong_type", "invalid_enum", "unknown_value"]

PREVIEW_CHARS = 400
MAX_RESPONSE_CHARS = 200_000  # the most of a response kept for the rules and for --include-responses
MAX_ARGUMENT_STRING = 4_096


@dataclass(frozen=True)
class ProbeCall:
    """One planned tools/call: the tool, the probe's label, its arguments and what kind of probe it is."""

    tool: str
    label: str
    arguments: dict[str, Any]
    kind: ProbeKind
    error_probe: ErrorProbeKind | None = None
    expect_error: bool | None = None  # None: either outcome is fine
    target: str | None = None  # the argument an error probe is about
    reused: dict[str, str] | None = None  # argument -> the tool whose earlier result gave its value (id_reuse)


class ProbeResult(BaseModel):
    """One tools/call made by a probe and its outcome. Everything server-sent is untrusted, capped text."""

    model_config = ConfigDict(extra="forbid", defer_build=True)  # built on first use (scanner/report/base.py)

    tool: str
    label: str
    kind: ProbeKind
    error_probe: ErrorProbeKind | None = Field(default=None, description="Which bad input an error probe sent.")
    expect_error: bool | None = Field(default=None, description="True when the call should fail; None: either way.")
    target: str | None = Field(default=None, description="The argument an error probe got wrong.")
    arguments: dict[str, Any] = Field(default_factory=dict)
    reused: dict[str, str] = Field(default_factory=dict, description="Arguments whose value an earlier call in the "
                                   "session returned: argument name -> the tool that returned it.")
    status: CallStatus
    is_error: bool = Field(default=False, description="The result's isError flag as the server set it.")
    latency_ms: float = 0.0
    tokens: int = Field(default=0, description="Estimated tokens of the response (4 characters ≈ 1 token).")
    response_chars: int = 0
    content_types: list[str] = Field(default_factory=list)
    preview: str = Field(default="", description="The first 400 characters of the response text.")
    response: str | None = Field(default=None, description="The response text (capped); kept with --include-responses.")
    error: str | None = Field(default=None, description="Protocol error, timeout or crash message (capped); for a "
                              "tool not probed, why.")
    error_code: int | None = Field(default=None, description="The JSON-RPC error code the server answered with.")
    error_data: str | None = Field(default=None, description="The `data` of the JSON-RPC error the server answered "
                                   "with, as JSON (capped): the client receives it with the message.")
    refused: bool = Field(default=False, description="The server answered, and the MCP client refused the answer "
                          "(it breaks the tool's outputSchema, or is not a tools/call result): the reason is `error` "
                          "(P11).")

    def text(self) -> str:
        """The response text as far as it was kept: the full (capped) response, else the preview, else the error."""
        if self.response is not None:
            return self.response
        return self.preview or (self.error or "")

    def answer_texts(self, answer: dict[str, Any] | None = None) -> list[str]:
        """Everything the server sent back, for the canary search: `answer`, the tools/call result as sent, whole
        (the record keeps MAX_RESPONSE_CHARS of it), else the response (else its preview); for a JSON-RPC error the
        server answered with, its whole message (the preview is only its first 400 characters) and its data."""
        if answer is not None:
            texts = [response_text(answer)]
        else:
            texts = [self.error or ""] if self.status == "protocol_error" and not self.refused else [self.text()]
        return [text for text in (*texts, self.error_data or "") if text]

    def without_response(self) -> ProbeResult:
        """A copy for a report written without --include-responses."""
        return self.model_copy(update={"response": None})


def response_text(call_result: dict[str, Any]) -> str:
    """The text an agent reads from a tools/call result (wire format): text blocks, embedded text resources, and the
    JSON of structuredContent unless a text block already is that JSON (the serialised copy the spec asks for).

    structuredContent is read beside the text: clients that hand it to the model (OpenAI's Apps SDK does) read what a
    text block of "Done." does not say, so the canaries and B7 search it too. Binary blocks are not counted."""
    parts: list[str] = []
    content = call_result.get("content")
    for block in content if isinstance(content, list) else []:
        if not isinstance(block, dict):
            continue
        if block.get("type") == "text" and isinstance(block.get("text"), str):
            parts.append(block["text"])
        elif block.get("type") == "resource" and isinstance(block.get("resource"), dict):
            embedded = block["resource"].get("text")
            if isinstance(embedded, str):
                parts.append(embedded)
        elif block.get("type") == "resource_link":
            parts.append(" ".join(str(block.get(key, "")) for key in ("uri", "name", "description")).strip())
    structured = call_result.get("structuredContent", call_result.get("structured_content"))
    if structured is not None and not _mirrored(parts, structured):
        parts.append(_structured_text(structured))
    return "\n".join(parts)


def _mirrored(parts: list[str], structured: Any) -> bool:
    """The text blocks already say all of structuredContent: one of them is its JSON, or (the Python SDK's shape for
    a tool returning a string or a list) it is `{"result": value}` with value the text itself or the list whose items
    the text blocks are, one JSON each. Read again, an honest answer's size would count twice (P1-P3)."""
    if any(_is_json_of(part, structured) for part in parts):
        return True
    if not (isinstance(structured, dict) and list(structured) == ["result"]) or not parts:
        return False
    value = structured["result"]
    if isinstance(value, str):
        return value in parts or value == "".join(parts)
    if isinstance(value, list) and len(value) == len(parts):
        return all(_is_json_of(part, item) for part, item in zip(parts, value, strict=True))
    return any(_is_json_of(part, value) for part in parts)


def _is_json_of(text: str, value: Any) -> bool:
    """The text block is `value` written as JSON (the copy of structuredContent a server sends for older clients)."""
    if not text.lstrip().startswith(("{", "[")):
        return False
    try:
        return bool(json.loads(text) == value)
    except (ValueError, RecursionError):
        return False


def _structured_text(structured: Any) -> str:
    """structuredContent as JSON text; one nested nearly as deep as the wire reader allows (~1,000 levels) may be
    too deep to write out again here, deeper in the stack than where it was parsed."""
    try:
        return json.dumps(structured, ensure_ascii=False)
    except RecursionError:
        return "(structured content nested too deeply to write out)"


def content_types(call_result: dict[str, Any]) -> list[str]:
    content = call_result.get("content")
    blocks = content if isinstance(content, list) else []
    return [cap_text(str(block.get("type", "?")), 40) for block in blocks if isinstance(block, dict)]


def result_from_call(call: ProbeCall, *, call_result: dict[str, Any], latency_ms: float) -> ProbeResult:
    """Record a call that returned a result (wire-format dict of CallToolResult)."""
    text = response_text(call_result)
    is_error = call_result.get("isError", call_result.get("is_error")) is True
    return _record(call, text, latency_ms, status="tool_error" if is_error else "ok", is_error=is_error,
                   content_types=content_types(call_result), response=cap_text(text, MAX_RESPONSE_CHARS))


def result_refused(call: ProbeCall, *, why: str, latency_ms: float) -> ProbeResult:
    """Record a call answered with something the MCP client refused (`why`): a protocol error marked `refused`, so
    the rules tell it from an error the server answered with (P11's, not P4's)."""
    return _record(call, why, latency_ms, status="protocol_error", error=cap_text(why, MAX_RESPONSE_CHARS),
                   refused=True)


def with_refused_answer(result: ProbeResult, answer: dict[str, Any] | None) -> ProbeResult:
    """A refused call's record with the answer the client refused, as sent (`answer`: its result; None keeps the
    record as it is): its text, size and content types, so the canaries and sizes are read from what the server
    answered, not from the refusal."""
    if not is_refused(result) or answer is None:
        return result
    text = response_text(answer)
    return result.model_copy(update={"tokens": estimate_tokens(text), "response_chars": len(text),
                                     "preview": text[:PREVIEW_CHARS], "content_types": content_types(answer),
                                     "response": cap_text(text, MAX_RESPONSE_CHARS)})


def is_refused(result: ProbeResult) -> bool:
    """A call whose answer the client refused (`result_refused`)."""
    return result.refused


def result_from_failure(call: ProbeCall, *, status: Literal["protocol_error", "timeout", "crashed"], error: str,
                        latency_ms: float, error_code: int | None = None, error_data: Any = None) -> ProbeResult:
    """Record a call that returned no result: a JSON-RPC error (with its code and data), a timeout or a server that
    died."""
    return _record(call, error, latency_ms, status=status, error=cap_text(error, MAX_RESPONSE_CHARS),
                   error_code=error_code, error_data=None if error_data is None else data_text(error_data))


def result_crashed(call: ProbeCall, answered: ProbeResult, why: str) -> ProbeResult:
    """The record of a call whose server was found gone after it came back (`answered`): the start of what it
    answered, then `why` (the exit, the stderr tail); the answer itself is kept (`response`, `error_data`: B7 reads
    them)."""
    return result_from_failure(call, status="crashed", error=(answered.error or answered.preview or "")[:200]
                               + f"\n{why}"[-4000:], latency_ms=answered.latency_ms).model_copy(
        update={"response": answered.response, "error_data": answered.error_data})


def data_text(data: Any) -> str:
    """A JSON-RPC error's `data` (untrusted JSON) as capped JSON text."""
    return cap_text(json.dumps(cap_json(data, max_string=MAX_RESPONSE_CHARS), ensure_ascii=False), MAX_RESPONSE_CHARS)


def result_not_probed(tool: str, reason: str) -> ProbeResult:
    """Record a tool the phase did not call, and why (e.g. it needs task-augmented execution)."""
    return ProbeResult(tool=tool, label="not probed", kind="generated", status="not_probed", error=reason)


def _record(call: ProbeCall, text: str, latency_ms: float, **outcome: Any) -> ProbeResult:
    """What every record holds: the call (arguments capped), its time, and the size and preview of `text`."""
    return ProbeResult(tool=call.tool, label=call.label, kind=call.kind, error_probe=call.error_probe,
                       expect_error=call.expect_error, target=call.target,
                       arguments=cap_json(call.arguments, max_string=MAX_ARGUMENT_STRING),
                       reused=cap_json(call.reused or {}, max_string=200),
                       latency_ms=round(latency_ms, 1), tokens=estimate_tokens(text), response_chars=len(text),
                       preview=text[:PREVIEW_CHARS], **outcome)
