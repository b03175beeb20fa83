"""S7 unbounded-list: list_* / get_all_* tools with no limit, paging or filter parameter."""

from __future__ import annotations

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


def check(ctx: LintContext) -> Iterator[Finding]:
    for tool in ctx.tools:
        if tool.name_is_string and _is_list_tool(tool) and not _bounds(tool) \
                and not _lists_configured_scope(tool):
            yield RULE.finding(tool.name, "list tool has no limit, paging or filter parameter",
                               evidence=", ".join(p.name for p in tool.params) or "(no parameters)")
