"""S1 tool-description-quality: missing, vague or too thin tool descriptions, judged by what they say.

A description is read by the agent to pick the tool and to call it. It must say what the tool does (and so what it
returns), and, when the schema leaves them unexplained, what its parameters are. A short precise description of a
simple tool is adequate ("Returns the sum of two numbers" for `get-sum(a, b)`, both described); a short one of a tool
whose parameters the agent must guess is not. Calibrated on the real-server corpus (docs/rules.md, "S1 and S7
calibration"): the earlier 15-word floor (mcp-linter's) fired 33 times on 5 servers, 31 of them on adequate one-line
descriptions.
"""

from __future__ import annotations

import re
from collections.abc import Iterator

from scanner.report.model import Finding
from scanner.rules.registry import rule
from scanner.rules.static.context import LintContext, Param, ToolView
from scanner.vocabulary import name_tokens

RULE = rule("S1")

# At or over this many words a description has room for what, returns and when: no thinness finding.
MIN_WORDS = 15
# Under this many words no description says both what a tool does and to what ("Switches branches").
MIN_SPECIFIC_WORDS = 3
# A short description may leave this many undescribed parameters to their names (repo_path, message); one more and
# the agent is guessing (git_diff's `target`, `context_lines` and `repo_path` next to "Shows differences ...").
MAX_UNEXPLAINED = 2
# A tool with this many parameters needs more than one short sentence even when each parameter is described.
MANY_PARAMS = 6

VAGUE_WORDS = frozenset({"stuff", "things", "thing", "helper", "misc", "various", "general", "etc", "whatever"})
VAGUE_PHRASES = re.compile(r"\b(helps? (you )?with (stuff|things|various)|does (stuff|things)|various (things|stuff)"
                           r"|general[- ]purpose (helper|tool|utility))\b", re.IGNORECASE)
# A VAGUE_PHRASES match starts with one of these words: in ASCII text (where only ASCII letters match them, in either
# case) a description without any of them is not searched.
VAGUE_PHRASE_STARTS = ("help", "does", "various", "general")
# Words that carry no content of their own: a description made of these and the name's words restates the name.
FILLER = frozenset({"a", "an", "the", "this", "that", "of", "for", "to", "in", "on", "by", "with", "and", "or", "it",
                    "tool", "function", "method", "data", "value", "values", "some", "given", "specified"})
MIN_STEM = 3  # a parameter-name token this long, found at the start of a description word, counts as mentioned


def _stem(word: str) -> str:
    word = word.lower()
    for suffix in ("ies", "es", "s"):
        if word.endswith(suffix) and len(word) - len(suffix) >= MIN_STEM:
            return word[: -len(suffix)] + ("y" if suffix == "ies" else "")
    return word


def _restates_name(tool: ToolView, text: list[str]) -> bool:
    """Every content word of the description is a word of the tool's name ("Gets a record." for get_record)."""
    named = {_stem(t) for t in tool.tokens}
    content = {_stem(w) for w in text if w.lower() not in FILLER}
    return bool(content) and content <= named


def _mentioned(param: Param, text: list[str]) -> bool:
    tokens = [t for t in name_tokens(param.name) if len(t) >= MIN_STEM]
    return any(w.lower().startswith(_stem(t)) for t in tokens for w in text)


def _unexplained(tool: ToolView, text: list[str]) -> list[str]:
    """Parameters neither the schema nor the description explains: the agent infers them from their names."""
    return [p.name for p in tool.params if not p.description.strip() and not _mentioned(p, text)]


def thinness(tool: ToolView) -> str | None:
    """Why a short description is not enough for this tool, or None when it is (or it is not short)."""
    text = tool.description_words
    count = len(text)
    if count >= MIN_WORDS:
        return None
    if count < MIN_SPECIFIC_WORDS:
        return f"tool description has {count} words: too few to say what the tool does and returns"
    if _restates_name(tool, text):
        return f"tool description only restates the tool name ({count} words)"
    unexplained = _unexplained(tool, text)
    if len(unexplained) > MAX_UNEXPLAINED:
        return (f"tool description has {count} words and leaves {len(unexplained)} parameters unexplained "
                f"({', '.join(unexplained[:5])})")
    if len(tool.params) >= MANY_PARAMS:
        return f"tool description has {count} words for a tool with {len(tool.params)} parameters"
    return None


def _vague_phrase(description: str) -> bool:
    """VAGUE_PHRASES occurs in the description (searched only when it could: VAGUE_PHRASE_STARTS)."""
    if description.isascii():
        folded = description.lower()
        if not any(word in folded for word in VAGUE_PHRASE_STARTS):
            return False
    return VAGUE_PHRASES.search(description) is not None


def check(ctx: LintContext) -> Iterator[Finding]:
    for tool in ctx.tools:
        if not tool.has_description:
            yield RULE.finding(tool.name, "tool has no description", severity="error")
            continue
        text = tool.description_words
        if (len(text) <= 3 and {w.lower() for w in text} & VAGUE_WORDS) or _vague_phrase(tool.description):
            yield RULE.finding(tool.name, "tool description is vague", evidence=tool.description[:200])
        elif (why := thinness(tool)) is not None:
            yield RULE.finding(tool.name, why, evidence=tool.description[:200])
