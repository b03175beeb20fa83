"""Untrusted text made inert in GitHub-flavoured Markdown, apart from the report views so that the Action's job
summary (scripts/action.py) escapes with the same patterns without importing the report model."""

from __future__ import annotations

import html
import re

_MARKDOWN_SPECIAL = re.compile(r"([\\`*_{}\[\]()#+!|~>])")
# What GitHub turns into a link, a ping or a picture in the rendered text (after its entities and backslashes are
# decoded, where an entity such as `&#64;` or `&#47;` no longer breaks anything): `@name` (a mention, also of a
# team), `https://…` and `www.…` (autolinks), `#12`, `GH-12` and `owner/repo#12` (issue links), `:warning:` (an
# emoji). A zero-width space after `@`, a `#` before a digit, `GH` before `-` and a digit, `www` before `.`, and a
# `:` before `//` or an emoji name and its closing `:` (in the escaped text, where `_` and `+` are `\_` and `\+`)
# breaks each of them unseen.
_GITHUB_TRIGGER = re.compile(r"(@|\\#(?=\d)|\bGH(?=-\d)|www(?=\.)|:(?=//|(?:[\w-]|\\[+_])+:))", re.IGNORECASE)


def inert(visible: str) -> str:
    """`visible` (untrusted text whose invisible and control characters are already shown as escapes) as Markdown
    that renders it as written: HTML entities, escaped punctuation, and a zero-width space that breaks each mention,
    autolink, issue link and emoji code (_GITHUB_TRIGGER)."""
    escaped = _MARKDOWN_SPECIAL.sub(r"\\\1", html.escape(visible, quote=False))
    return _GITHUB_TRIGGER.sub(r"\1&#8203;", escaped)
