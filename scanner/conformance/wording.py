"""How the conformance checks quote the wire: one short line per answer, server text escaped and capped."""

from __future__ import annotations

from sandbox.core.untrusted import cap_text, escape_invisible
from scanner.conformance.model import Answer

MAX_QUOTE_CHARS = 160


def quote(text: str, limit: int = MAX_QUOTE_CHARS) -> str:
    """Server text for a report line: whitespace folded, invisible characters escaped, capped."""
    return escape_invisible(cap_text(" ".join(text.split()), limit))


def answer_text(answer: Answer) -> str:
    """`error -32601 "Method not found"`, `a result`, `no answer within 10 s`, `no answer: the server closed stdout`."""
    if answer.error is not None:
        code = answer.code if answer.code is not None else "without a code"
        return f'error {code} "{quote(answer.message)}"' if answer.message else f"error {code}"
    if answer.result is not None:
        return "a result"
    if answer.closed:
        return f"no answer: HTTP {answer.status}" if answer.status is not None else \
            "no answer: the server closed stdout (over HTTP: the request failed)"
    return f"no answer within {answer.seconds:g} s"


def exchange_line(arrow: str, text: str, limit: int = 300) -> str:
    """One line of the wire log (`->` sent, `<-` received), escaped and capped."""
    return f"{arrow} {escape_invisible(cap_text(text, limit))}"
