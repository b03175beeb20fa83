"""What `vet` works on and what it reports: the tokens a parser reads out of one source file (the same shape for
TypeScript, JavaScript and Python, so every rule is written once), the file they came from, and the findings."""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from enum import Enum
from pathlib import Path
from typing import Literal

Kind = Literal["string", "number", "name", "key"]
Language = Literal["typescript", "tsx", "javascript", "python"]


class Tier(str, Enum):
    """How bad a finding is against the 2026-07-28 revision: BREAKING stops working, DEPRECATED still works but is
    on its way out, WARNING is a hardening requirement the code appears to miss, ADVISORY is an SDK migration hint."""

    BREAKING = "BREAKING"
    DEPRECATED = "DEPRECATED"
    WARNING = "WARNING"
    ADVISORY = "ADVISORY"


CONFIDENCES = ("low", "medium", "high")
Confidence = Literal["low", "medium", "high"]


def confidence_rank(confidence: str) -> int:
    return CONFIDENCES.index(confidence)


# The line breaks each parser counts: Python's tokenizer ends a line at CRLF, CR or LF; tree-sitter only at LF. Not
# str.splitlines, which also breaks at a form feed, U+2028 and others: a line number from the parser would then
# name another line of the text (and --fix rewrite the wrong one).
LINE_BREAKS = {"python": re.compile(r"\r\n|\r|\n"), "typescript": re.compile(r"\n"), "tsx": re.compile(r"\n"),
               "javascript": re.compile(r"\n")}


def source_lines(text: str, language: Language, keepends: bool = False) -> list[str]:
    """The lines of a source file as its parser numbers them (line N is item N - 1)."""
    if not keepends:
        return LINE_BREAKS[language].split(text)
    lines, start = [], 0
    for match in LINE_BREAKS[language].finditer(text):
        lines.append(text[start:match.end()])
        start = match.end()
    return lines + [text[start:]]


@dataclass(frozen=True, slots=True)
class Token:
    """One structural fact of a file: a string literal, a (signed) number literal, an identifier or an object key /
    keyword argument, at a 1-based line and character column, with the context flags a parser found around it
    (`registration`, `error_code`, `in_capabilities`, `benign`, `client_session`, `transport_ctx`, `transport_sse`,
    `sse_endpoint_event`, `cred_key`; for the SDK advisories `import_module`, `import_name`, `from:MODULE`, `kwarg`,
    `callee:NAME`, `attribute` and the call shapes parse_ts_sdk marks)."""

    kind: Kind
    value: str
    line: int
    col: int
    flags: frozenset[str] = frozenset()

    def has(self, flag: str) -> bool:
        return flag in self.flags


@dataclass(frozen=True)
class ParsedFile:
    """A source file as the rules see it: its path relative to the vetted root, its lines and its tokens."""

    path: Path
    relative: str
    language: Language
    lines: tuple[str, ...]
    tokens: tuple[Token, ...]


@dataclass(frozen=True)
class Hit:
    """What a rule function yields: the rule, the token it anchors on and how sure it is."""

    rule_id: str
    token: Token
    confidence: Confidence
    detail: str = ""  # a sentence the rule adds for this instance (where a v1 module path moved to)


@dataclass(frozen=True)
class VetFinding:
    file: str
    line: int
    column: int
    end_column: int
    rule_id: str
    tier: Tier
    confidence: Confidence
    message: str
    before: str
    after: str
    doc_url: str

    def as_json(self) -> dict[str, object]:
        return {"file": self.file, "line": self.line, "column": self.column, "end_column": self.end_column,
                "rule_id": self.rule_id, "tier": self.tier.value, "confidence": self.confidence,
                "message": self.message, "before": self.before, "after": self.after, "doc_url": self.doc_url}


@dataclass(frozen=True)
class Suppressed:
    """A finding an inline directive silenced: counted and reported, never dropped silently."""

    file: str
    line: int
    rule_id: str
    directive: str


@dataclass
class VetResult:
    """The outcome of vetting one or more roots: findings (sorted by file, line, column, id), the suppressed ones,
    the files read, and notes on what was skipped or could not be read (a skipped file is said, never silent)."""

    root: Path
    findings: list[VetFinding] = field(default_factory=list)
    suppressed: list[Suppressed] = field(default_factory=list)
    files_scanned: int = 0
    notes: list[str] = field(default_factory=list)
    sdk: dict[str, str] = field(default_factory=dict)
    # Advisory findings not reported because the nearest manifest declares SDK v1 (group -> count): said in one note
    held_back: dict[str, int] = field(default_factory=dict)

    def as_json(self) -> dict[str, object]:
        return {"root": str(self.root), "files_scanned": self.files_scanned,
                "findings": [f.as_json() for f in self.findings],
                "suppressed": [{"file": s.file, "line": s.line, "rule_id": s.rule_id, "directive": s.directive}
                               for s in self.suppressed],
                "notes": list(self.notes), "sdk": dict(self.sdk), "held_back": dict(self.held_back)}
