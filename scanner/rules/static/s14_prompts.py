"""S14 prompt-quality: duplicate prompts or arguments, missing or short descriptions."""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterator
from typing import Any

from scanner.report.model import Finding
from scanner.rules.registry import rule
from scanner.rules.static.context import LintContext
from scanner.rules.static.text import words

RULE = rule("S14")


MIN_PROMPT_WORDS = 5


def _description(value: Any) -> str:
    text = value.get("description") if isinstance(value, dict) else None
    return text.strip() if isinstance(text, str) else ""


def _prompt_findings(label: str, prompt: dict[str, Any]) -> Iterator[Finding]:
    description = _description(prompt)
    if not description:
        yield RULE.finding(None, f"prompt `{label}` has no description", evidence=label)
    elif len(words(description)) < MIN_PROMPT_WORDS:
        yield RULE.finding(None, f"prompt `{label}` description is under {MIN_PROMPT_WORDS} words", severity="info",
                           evidence=description[:200])
    arguments = prompt.get("arguments") or []
    if not isinstance(arguments, list):
        yield RULE.finding(None, f"prompt `{label}` arguments is not a list", severity="error")
        return
    names = Counter(a.get("name") for a in arguments if isinstance(a, dict) and isinstance(a.get("name"), str))
    for name, count in names.items():
        if count > 1:
            yield RULE.finding(None, f"prompt `{label}` lists argument `{name}` {count} times", severity="error",
                               evidence=name)
    for argument in arguments:
        if isinstance(argument, dict) and isinstance(argument.get("name"), str) and not _description(argument):
            yield RULE.finding(None, f"argument `{argument['name']}` of prompt `{label}` has no description",
                               severity="info", evidence=argument["name"])


def check(ctx: LintContext) -> Iterator[Finding]:
    names: Counter[str] = Counter()
    for index, prompt in enumerate(ctx.prompts):
        if not isinstance(prompt, dict) or not isinstance(prompt.get("name"), str):
            yield RULE.finding(None, f"prompt #{index} is not an object with a string name", severity="error")
            continue
        names[prompt["name"]] += 1
        yield from _prompt_findings(prompt["name"], prompt)
    for name, count in names.items():
        if count > 1:
            yield RULE.finding(None, f"prompt name `{name}` is listed {count} times", severity="error", evidence=name)
