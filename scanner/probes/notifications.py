"""The server notifications a probe session received, by method: how many, and the first one's params (capped and
escaped, as ASCII JSON). Fed by the MCP client's public message_handler; what the SDK does not surface (cancelled,
methods unknown to the negotiated version) is not seen."""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Any

from sandbox.core.untrusted import cap_json, cap_text, escape_to_ascii
from scanner.report.model import NotificationSeen

MAX_METHODS = 50  # distinct methods kept; later new ones are only counted in `dropped`
PARAMS_PREVIEW_CHARS = 300
LIST_CHANGED = "notifications/tools/list_changed"


def params_preview(params: Any) -> str:
    """Params as sorted ASCII JSON (every control and non-ASCII character escaped), bounded and capped."""
    if params is None:
        return ""
    bounded = cap_json(params, max_string=PARAMS_PREVIEW_CHARS, max_depth=8, max_items=50)
    text = cap_text(json.dumps(bounded, ensure_ascii=True, sort_keys=True, default=str), PARAMS_PREVIEW_CHARS)
    return escape_to_ascii(text)  # the cap's own mark is the one non-ASCII character left


@dataclass
class NotificationLog:
    seen: dict[str, NotificationSeen] = field(default_factory=dict)
    dropped: int = 0  # notifications of methods past MAX_METHODS

    def note(self, message: Any) -> bool:
        """Record a message the MCP client's message_handler was given (an exception there is not one); True when it
        is notifications/tools/list_changed."""
        if isinstance(message, Exception):
            return False
        params = getattr(message, "params", None)
        self.record(message.method, _dumped(params) if params else None)
        return message.method == LIST_CHANGED

    def record(self, method: str, params: Any) -> None:
        entry = self.seen.get(method)
        if entry is not None:
            entry.count += 1
        elif len(self.seen) < MAX_METHODS:
            self.seen[method] = NotificationSeen(method=cap_text(method, 200), count=1,
                                                 first_params=params_preview(params))
        else:
            self.dropped += 1

    def count(self, method: str) -> int:
        entry = self.seen.get(method)
        return entry.count if entry is not None else 0

    def entries(self) -> list[NotificationSeen]:
        return [entry.model_copy() for entry in self.seen.values()]


def _dumped(params: Any) -> Any:
    """The notification's params as JSON values; past the depth pydantic serializes (a value nested some hundreds of
    levels deep), its fields as they were parsed (the preview caps the depth)."""
    try:
        return params.model_dump(mode="json", by_alias=True, exclude_none=True)
    except ValueError:
        return {name: value for name, value in vars(params).items() if value is not None}
