"""S7 unbounded-list: list_* / get_all_* tools with no limit, paging or filter parameter."""

from __future__ import annotations

import re
from collections.abc import Iterator

from scanner.report.model import Finding
from scanner.rules.registry import rule
from scanner.rules.static.context import LintContext, ToolView
from scanner.vocabulary import name_tokens

RULE = rule("S7")

BOUNDING_TOKENS = frozenset({
    "limit", "max", "maximum", "page", "pages", "cursor", "offset", "skip", "top", "first", "last", "count", "size",
    "filter", "filters", "query", "q", "search", "since", "until", "after", "before", "where", "pattern", "prefix",
    "glob", "match", "token", "start", "end", "from", "to", "range", "per", "batch", "tail", "head", "n",
})

# A no-argument list of the server's own configured scope (filesystem's list_allowed_directories) returns what the
# user configured: a handful of entries, not a data set. Corpus review: S7 on it was a false positive.
CONFIGURED_SCOPE_TOKENS = frozenset({"allowed", "permitted", "configured"})

# A no-argument list of the server's own live handles that the agent itself started in this session (desktop-
# commander's list_sessions "List all active terminal sessions", list_searches "List all active searches") holds
# what the agent made: a few entries. Corpus review: S7 on them was a false positive (the probe saw 0 and 2 entries).
# Not the host's processes or a store's records: those are the user's data, however they are named.
SESSION_STATE_TOKENS = frozenset({"session", "sessions", "search", "searches", "job", "jobs", "subscription",
                                  "subscriptions", "watcher", "watchers"})
LIVE = re.compile(r"\b(active|in progress|running|open|started|this session)\b", re.IGNORECASE)


def _is_list_tool(tool: ToolView) -> bool:
    """list_x, listX, get_all_x, getAllX, also behind a service prefix (github_list_issues)."""
    tokens = tool.tokens
    start = 1 if len(tokens) > 2 and tokens[1] in ("list", "get") and tokens[0] not in ("list", "get") else 0
    return tokens[start:start + 1] == ["list"] or tokens[start:start + 2] == ["get", "all"]


def _bounds(tool: ToolView) -> bool:
    return any(set(name_tokens(p.name)) & BOUNDING_TOKENS for p in tool.params)


def _lists_configured_scope(tool: ToolView) -> bool:
    """list_allowed_directories, list_configured_accounts: no parameters, and the listed thing is the user's config."""
    return not tool.params and bool(set(tool.tokens) & CONFIGURED_SCOPE_TOKENS)


def _lists_own_session_state(tool: ToolView) -> bool:
    """list_sessions, list_searches: no parameters, the listed thing is a live handle, and the text says so."""
    return not tool.params and bool(set(tool.tokens) & SESSION_STATE_TOKENS) and bool(LIVE.search(tool.description))


def check(ctx: LintContext) -> Iterator[Finding]:
    for tool in ctx.tools:
        if tool.name_is_string and _is_list_tool(tool) and not _bounds(tool) \
                and not _lists_configured_scope(tool) and not _lists_own_session_state(tool):
            yield RULE.finding(tool.name, "list tool has no limit, paging or filter parameter",
                               evidence=", ".join(p.name for p in tool.params) or "(no parameters)")
