"""What each protocol revision's schema says a server's message must be, as the MCP SDK's client checks it
(mcp_types.methods, docs/own-client.md §2 and §4), without importing every revision: only the negotiated one's surface
models are imported, when first needed (the handshake era's cost about 0.09 s of CPU, the 2026 revision's 0.06 s;
mcp_types.methods imports both and builds its tables).

A result is checked against its revision's surface model first (a pydantic ValidationError when it does not match),
the fields only a later revision defines dropped, then read by the version-free model; a notification the
revision does not define, or whose params its surface model rejects, is not read at all."""

from __future__ import annotations

import importlib
import json
import sys
import threading
from dataclasses import dataclass
from functools import cache
from types import ModuleType
from typing import Any

import mcp_types
from mcp_types.version import MODERN_PROTOCOL_VERSIONS
from pydantic import BaseModel, TypeAdapter, ValidationError

HANDSHAKE_ERA_DEFAULT = "2025-11-25"  # the SDK's version before negotiation ends
_MODULES = {"handshake": "mcp_types._v2025_11_25", "modern": "mcp_types._v2026_07_28"}

# method -> (the handshake era's surface model, 2026-07-28's): None where the revision has no such method.
_RESULTS: dict[str, tuple[str | None, str | None]] = {
    "initialize": ("InitializeResult", None),
    "tools/list": ("ListToolsResult", "ListToolsResult"),
    "prompts/list": ("ListPromptsResult", "ListPromptsResult"),
    "resources/list": ("ListResourcesResult", "ListResourcesResult"),
    "resources/templates/list": ("ListResourceTemplatesResult", "ListResourceTemplatesResult"),
    "tools/call": ("CallToolResult", "AnyCallToolResult"),
}
_LISTS = ("tools/list", "prompts/list", "resources/list", "resources/templates/list")
# The fields a handshake-era session drops from a result before reading it: 2026-07-28's own (the SDK's
# _later_revision_fields; pinned against it by tests/test_client_parity).
LATER_FIELDS: dict[str, frozenset[str]] = {
    **{method: frozenset({"ttlMs", "cacheScope", "resultType"}) for method in _LISTS},
    "tools/call": frozenset({"resultType", "inputRequests", "requestState"}),
}
# The version-free models the scan reads results into.
MODELS: dict[str, Any] = {
    "initialize": mcp_types.InitializeResult,
    "tools/list": mcp_types.ListToolsResult,
    "prompts/list": mcp_types.ListPromptsResult,
    "resources/list": mcp_types.ListResourcesResult,
    "resources/templates/list": mcp_types.ListResourceTemplatesResult,
    "tools/call": mcp_types.CallToolResult | mcp_types.InputRequiredResult,
}

# notification method -> (surface model name, the version-free model, the revisions that define it)
_ALL = ("2024-11-05", "2025-03-26", "2025-06-18", "2025-11-25", "2026-07-28")
_NOTIFICATIONS: dict[str, tuple[str, type[BaseModel], tuple[str, ...]]] = {
    "notifications/cancelled": ("CancelledNotification", mcp_types.CancelledNotification, _ALL),
    "notifications/message": ("LoggingMessageNotification", mcp_types.LoggingMessageNotification, _ALL),
    "notifications/progress": ("ProgressNotification", mcp_types.ProgressNotification, _ALL),
    "notifications/prompts/list_changed": ("PromptListChangedNotification",
                                           mcp_types.PromptListChangedNotification, _ALL),
    "notifications/resources/list_changed": ("ResourceListChangedNotification",
                                             mcp_types.ResourceListChangedNotification, _ALL),
    "notifications/resources/updated": ("ResourceUpdatedNotification", mcp_types.ResourceUpdatedNotification, _ALL),
    "notifications/tools/list_changed": ("ToolListChangedNotification", mcp_types.ToolListChangedNotification, _ALL),
    "notifications/elicitation/complete": ("ElicitationCompleteNotification", mcp_types.ElicitCompleteNotification,
                                           ("2025-11-25",)),
    "notifications/subscriptions/acknowledged": ("SubscriptionsAcknowledgedNotification",
                                                 mcp_types.SubscriptionsAcknowledgedNotification, ("2026-07-28",)),
}


def is_modern(version: str) -> bool:
    return version in MODERN_PROTOCOL_VERSIONS


def preload_revisions() -> None:
    """Import both revisions' surface models in a thread of their own, unless they are loaded: begun as the client
    sends its first request, so that the revision the session settles on is loaded by the time the server (booting
    meanwhile) answers. Not waited for: a first answer that comes sooner waits for the import lock instead."""
    if not all(name in sys.modules for name in _MODULES.values()):
        threading.Thread(target=_import_revisions, name="mcp-sandbox-revisions").start()


def _import_revisions() -> None:
    for name in _MODULES.values():
        importlib.import_module(name)


def revision(version: str) -> ModuleType:
    """The surface models of `version`'s revision, imported on first use."""
    return importlib.import_module(_MODULES["modern" if is_modern(version) else "handshake"])


@cache
def _adapter(target: Any) -> TypeAdapter[Any]:
    return TypeAdapter(target)


def ttl_floored(raw: dict[str, Any]) -> dict[str, Any]:
    """The result with a negative top-level `ttlMs` floored to 0, as the SDK's client reads every result."""
    ttl = raw.get("ttlMs")
    if isinstance(ttl, int | float) and not isinstance(ttl, bool) and ttl < 0:
        return {**raw, "ttlMs": 0}
    return raw


def read_result(method: str, version: str, raw: dict[str, Any]) -> Any:
    """`raw` as the SDK's client reads the result of `method` at `version`: a negative top-level `ttlMs` floored to
    0, the revision's surface check, a later revision's fields dropped, then the version-free model (ValidationError
    from either check)."""
    raw = ttl_floored(raw)
    names = _RESULTS.get(method)
    name = None if names is None else names[1 if is_modern(version) else 0]
    if name is not None:
        _adapter(getattr(revision(version), name)).validate_python(raw, by_name=False)
    if not is_modern(version):
        later = LATER_FIELDS.get(method, frozenset())
        if not later.isdisjoint(raw):
            raw = {key: value for key, value in raw.items() if key not in later}
    return _adapter(MODELS[method]).validate_python(raw, by_name=False)


@dataclass
class _Read:
    version: str
    raw: dict[str, Any]
    page: Any
    json_text: str | None = None  # the result as JSON text, made when first compared

    def text(self) -> str:
        if self.json_text is None:
            self.json_text = json.dumps(self.raw)
        return self.json_text


class RepeatedListing:
    """tools/list's first page as last read, reused when the server answers with the same result again: the probes
    re-list after every call (P8), and reading 3,000 tools costs about 0.11 s of CPU where comparing them costs about
    0.03 s. The same means the same protocol version and an equal result as JSON: Python's equality first (cheap;
    what it calls unequal is read again), then the JSON text, which tells `true` from `1` (the output-schema check
    reads schemas as JSON: scanner.client.tool_schemas). A result that failed to read is not kept, nor compared when
    it is too deep to; the page returned is the one read before (the client's absorb filters it again, to the same
    tools)."""

    def __init__(self) -> None:
        self._last: _Read | None = None

    def read(self, method: str, version: str, raw: dict[str, Any]) -> Any:
        """read_result of a tools/list result, or the page read from the same result last time."""
        if self._repeats(version, raw):
            assert self._last is not None
            return self._last.page
        page = read_result(method, version, raw)
        self._last = _Read(version, raw, page)
        return page

    def _repeats(self, version: str, raw: dict[str, Any]) -> bool:
        last = self._last
        if last is None or last.version != version:
            return False
        try:
            return last.raw == raw and last.text() == json.dumps(raw)
        except (RecursionError, ValueError, TypeError):  # too deep (or not plain JSON) to compare: read it again
            return False


def read_notification(method: str, version: str, params: dict[str, Any] | None) -> BaseModel | None:
    """The server's notification as its version-free model, or None when `version` does not define `method` or its
    params fail the check (the SDK drops those with a log line)."""
    known = _NOTIFICATIONS.get(method)
    if known is None or version not in known[2]:
        return None
    surface_name, model, _ = known
    body: dict[str, Any] = {"method": method} if params is None else {"method": method, "params": params}
    try:
        getattr(revision(version), surface_name).model_validate({"jsonrpc": "2.0", **body}, by_name=False)
        return model.model_validate(body, by_name=False)
    except ValidationError:
        return None
