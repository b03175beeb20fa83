"""One file through `vet`: parse it (tree-sitter for TypeScript/JavaScript, `ast` for Python), run every rule of
scanner/vet/rules on its tokens (the SDK-migration advisories as its SdkGate says: run, run annotated, or held back
and only counted), drop what its suppression directives silence (counting each one), keep what meets
--min-confidence, and turn each hit into a finding with the rule's quote, a before/after and the doc link."""

from __future__ import annotations

import sys
from dataclasses import dataclass
from pathlib import Path

from scanner.vet.catalogue import BY_ID, vet_rule
from scanner.vet.facts import facts_of
from scanner.vet.model import Hit, Language, ParsedFile, Suppressed, Tier, VetFinding, confidence_rank, source_lines
from scanner.vet.rules import GROUPS, PY_ADVISORIES, TS_ADVISORIES
from scanner.vet.sdk_gate import SdkGate
from scanner.vet.suppress import Suppressions, parse_suppressions

MINIFIED_LINE = 5_000  # a line longer than this is a bundle, not code a person wrote and will migrate
DATA_LINE_CODE = 500  # unless this much at most of it is outside its string literals: an embedded image or key
QUOTES = (b'"', b"'", b"`")
SNIPPET_CHARS = 200
RUNNING_PYTHON = f"{sys.version_info.major}.{sys.version_info.minor}"


class Unparsable(ValueError):
    """The file is not valid source of its language: noted, never a silent pass."""


@dataclass(frozen=True)
class FileOutcome:
    findings: list[VetFinding]
    suppressed: list[Suppressed]
    held_back: int = 0  # advisory hits not reported: the manifest declares SDK v1


def is_minified(source: bytes) -> bool:
    """A line of code over MINIFIED_LINE bytes: checked before parsing, so a bundle costs no parse. A long line that
    is one string literal (`export const LOGO = "iVBORw0…"`) is data in a file a person wrote: the file is read."""
    return len(source) > MINIFIED_LINE and any(len(line) > MINIFIED_LINE and not _string_data(line)
                                               for line in source.split(b"\n"))


def _string_data(line: bytes) -> bool:
    """At most DATA_LINE_CODE bytes of the line lie outside its literals of one quote kind."""
    for quote in QUOTES:
        if line.count(quote) >= 2 and sum(map(len, line.split(quote)[::2])) <= DATA_LINE_CODE:
            return True
    return False


def parse_file(path: Path, relative: str, language: Language, source: bytes) -> ParsedFile:
    text = source.decode("utf-8", "replace")
    lines = tuple(source_lines(text, language))
    if language == "python":
        from scanner.vet.parse_py import py_tokens
        try:
            tokens = py_tokens(text)
        except (SyntaxError, ValueError, RecursionError) as exc:  # RecursionError: nesting deeper than `ast` reads
            raise Unparsable(f"{relative}: not valid Python {RUNNING_PYTHON} ({exc.__class__.__name__}: {exc}); "
                             f"`ast` reads the syntax of the Python vet runs under, so code written for a newer "
                             f"one (`type X = …`, `def f[T]()`) needs vet run under that Python") from exc
    else:
        from scanner.vet.parse_ts import TooDeep, ts_tokens
        try:
            tokens = ts_tokens(source, language)
        except TooDeep as exc:
            raise Unparsable(f"{relative}: not read ({exc})") from exc
    return ParsedFile(path=path, relative=relative, language=language, lines=lines, tokens=tokens)


def _unique(hits: list[Hit]) -> list[Hit]:
    """One hit per (line, column, rule), the most confident, in source order."""
    seen: dict[tuple[int, int, str], Hit] = {}
    for hit in hits:
        key = (hit.token.line, hit.token.col, hit.rule_id)
        if key not in seen or confidence_rank(hit.confidence) > confidence_rank(seen[key].confidence):
            seen[key] = hit
    return sorted(seen.values(), key=lambda h: (h.token.line, h.token.col, h.rule_id))


def advisory_hits(parsed: ParsedFile, gate: SdkGate) -> list[Hit]:
    """The SDK-migration group of the file's language, when the file imports that SDK (whatever the gate says)."""
    group = PY_ADVISORIES if parsed.language == "python" else TS_ADVISORIES
    if not group.applies(parsed):
        return []
    return _unique([hit for find in group.rules.values() for hit in find(parsed, gate)])


def hits_of(parsed: ParsedFile) -> list[Hit]:
    """Every protocol rule's hits on one file, one per (line, column, rule), in source order."""
    facts = facts_of(parsed)
    return _unique([hit for find in GROUPS.values() for hit in find(parsed, facts)])


def _snippet(lines: tuple[str, ...], line: int) -> str:
    shown = [f"{n}: {lines[n - 1].strip()[:SNIPPET_CHARS]}" for n in (line, line + 1) if 0 < n <= len(lines)]
    return "\n".join(shown)


def finding_of(parsed: ParsedFile, hit: Hit, annotation: str = "") -> VetFinding:
    rule = vet_rule(hit.rule_id)
    token = hit.token
    said = f"per the SDK migration guide, {rule.quote}" if rule.tier is Tier.ADVISORY else \
        f'the specification says "{rule.quote}"'
    detail = f" {hit.detail}" if hit.detail else ""
    return VetFinding(file=parsed.relative, line=token.line, column=token.col,
                      end_column=token.col + len(token.value), rule_id=rule.id, tier=rule.tier,
                      confidence=hit.confidence, message=f"{rule.title}: {said}{detail}{annotation}",
                      before=_snippet(parsed.lines, token.line), after=rule.after, doc_url=rule.doc)


def vet_file(parsed: ParsedFile, min_confidence: str, gate: SdkGate) -> FileOutcome:
    directives = parse_suppressions(parsed.lines, BY_ID)
    advisories = [h for h in advisory_hits(parsed, gate)
                  if confidence_rank(h.confidence) >= confidence_rank(min_confidence)]
    if gate.state == "held":
        return FileOutcome(*_reported(parsed, hits_of(parsed), min_confidence, directives, ""), len(advisories))
    protocol = _reported(parsed, hits_of(parsed), min_confidence, directives, "")
    advisory = _reported(parsed, advisories, min_confidence, directives, gate.annotation())
    findings = sorted(protocol[0] + advisory[0], key=lambda f: (f.line, f.column, f.rule_id))
    return FileOutcome(findings, protocol[1] + advisory[1])


def _reported(parsed: ParsedFile, hits: list[Hit], min_confidence: str, directives: Suppressions,
              annotation: str) -> tuple[list[VetFinding], list[Suppressed]]:
    """The hits at or above --min-confidence as findings, minus (and listing) those a directive silences."""
    findings, suppressed = [], []
    for hit in hits:
        if confidence_rank(hit.confidence) < confidence_rank(min_confidence):
            continue
        directive = directives.silences(hit.token.line, hit.rule_id)
        if directive is not None:
            suppressed.append(Suppressed(parsed.relative, hit.token.line, hit.rule_id, directive))
        else:
            findings.append(finding_of(parsed, hit, annotation))
    return findings, suppressed
