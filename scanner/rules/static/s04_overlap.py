"""S4 overlapping-tools: near-duplicate tools by TF-IDF cosine of name+description and shared parameters.

Candidate pairs come from an inverted index over each tool's few heaviest terms (very common terms are skipped),
so the work grows with the number of genuinely similar pairs, not with n squared.
"""

from __future__ import annotations

import math
from collections import Counter, defaultdict
from collections.abc import Iterator

from scanner.report.model import Finding
from scanner.rules.registry import rule
from scanner.rules.static.context import LintContext, ToolView
from scanner.rules.static.text import words
from scanner.vocabulary import name_tokens

RULE = rule("S4")


MIN_COSINE = 0.5
MIN_SHARED_PARAMS = 0.5
TOP_TERMS = 6
MAX_POSTING = 64
MAX_COMPARISONS = 200_000
STOP_WORDS = frozenset({"a", "an", "the", "of", "to", "and", "or", "in", "on", "for", "with", "by", "is", "are", "be",
                        "it", "this", "that", "from", "as", "at", "if", "its", "can", "will", "all", "any", "use"})

Vector = dict[str, float]


def _terms(tool: ToolView) -> list[str]:
    text_terms = [w.lower() for w in words(tool.description)]
    return [t for t in tool.tokens + name_tokens(tool.title) + text_terms if t not in STOP_WORDS]


def _vectors(tools: list[ToolView]) -> list[Vector]:
    counts = [Counter(_terms(tool)) for tool in tools]
    doc_freq: Counter[str] = Counter()
    for c in counts:
        doc_freq.update(c.keys())
    n = len(tools)
    vectors: list[Vector] = []
    for c in counts:
        vec = {term: tf * (math.log((1 + n) / (1 + doc_freq[term])) + 1.0) for term, tf in c.items()}
        norm = math.sqrt(sum(w * w for w in vec.values())) or 1.0
        vectors.append({term: w / norm for term, w in vec.items()})
    return vectors


def _cosine(a: Vector, b: Vector) -> float:
    if len(a) > len(b):
        a, b = b, a
    return sum(w * b.get(term, 0.0) for term, w in a.items())


def _shared_params(a: ToolView, b: ToolView) -> float:
    names_a = {p.name for p in a.params}
    names_b = {p.name for p in b.params}
    if not names_a and not names_b:
        return 1.0
    return len(names_a & names_b) / max(len(names_a), len(names_b))


def _candidates(vectors: list[Vector]) -> tuple[set[tuple[int, int]], bool]:
    postings: dict[str, list[int]] = defaultdict(list)
    for index, vec in enumerate(vectors):
        for term in sorted(vec, key=vec.__getitem__, reverse=True)[:TOP_TERMS]:
            postings[term].append(index)
    pairs: set[tuple[int, int]] = set()
    for members in postings.values():
        if len(members) > MAX_POSTING:
            continue
        for i, left in enumerate(members):
            for right in members[i + 1:]:
                pairs.add((left, right))
                if len(pairs) >= MAX_COMPARISONS:
                    return pairs, True
    return pairs, False


def check(ctx: LintContext) -> Iterator[Finding]:
    tools = [t for t in ctx.tools if t.name_is_string]
    if len(tools) < 2:
        return
    vectors = _vectors(tools)
    pairs, truncated = _candidates(vectors)
    for left, right in sorted(pairs):
        a, b = tools[left], tools[right]
        if a.name == b.name or (a.verb and b.verb and a.verb != b.verb):
            continue
        if _shared_params(a, b) < MIN_SHARED_PARAMS:
            continue
        score = _cosine(vectors[left], vectors[right])
        if score >= MIN_COSINE:
            yield RULE.finding(b.name, f"overlaps with `{a.name}` (similarity {score:.2f}, shared parameters)",
                               evidence=f"{a.name} ~ {b.name}")
    if truncated:
        yield RULE.finding(None, f"overlap check stopped after {MAX_COMPARISONS} candidate pairs; some pairs unchecked",
                           severity="info", fix="")
