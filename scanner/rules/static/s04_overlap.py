"""S4 overlapping-tools: near-duplicate tools by TF-IDF cosine of name+description and shared parameters.

Candidate pairs come from an inverted index of every term, probed with each tool's prefix: its heaviest terms until
the rest could no longer reach MIN_COSINE. The result is exactly the full pairwise comparison's (a test checks it
against brute force), and the work grows with the number of pairs sharing a heavy term, not with n squared; past
MAX_COMPARISONS candidate pairs the rule stops and says so.
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
MAX_COMPARISONS = 200_000  # candidate pairs examined; past this the rule says it stopped (an info finding)
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


def _prefix(vec: Vector) -> list[str]:
    """The heaviest terms of a vector until what is left has norm below MIN_COSINE (with a rounding margin).

    A tool sharing none of these terms with another has cosine < MIN_COSINE with it (Cauchy-Schwarz: the rest of
    the vector has norm < MIN_COSINE and the other vector has norm 1), so probing only these terms misses no pair.
    """
    left = sum(w * w for w in vec.values())
    bound = (MIN_COSINE * (1 - 1e-9)) ** 2
    out: list[str] = []
    for term in sorted(vec, key=lambda t: (-vec[t], t)):
        if left < bound:
            break
        out.append(term)
        left -= vec[term] * vec[term]
    return out


def _comparable(a: ToolView, b: ToolView) -> bool:
    """Worth comparing: other names, no two different verbs, and at least MIN_SHARED_PARAMS of parameters shared."""
    return _Comparable([a, b])(0, 1)


class _Comparable:
    """`_comparable` over the tools by index, each tool's name, verb and parameter names read once."""

    def __init__(self, tools: list[ToolView]) -> None:
        self.names = [tool.name for tool in tools]
        self.verbs = [tool.verb for tool in tools]
        self.params = [frozenset(p.name for p in tool.params) for tool in tools]

    def __call__(self, left: int, right: int) -> bool:
        if self.names[left] == self.names[right]:
            return False
        verb_a, verb_b = self.verbs[left], self.verbs[right]
        if verb_a and verb_b and verb_a != verb_b:
            return False
        names_a, names_b = self.params[left], self.params[right]
        if not names_a and not names_b:
            return True
        return len(names_a & names_b) / max(len(names_a), len(names_b)) >= MIN_SHARED_PARAMS


def _candidates(tools: list[ToolView], vectors: list[Vector]) -> tuple[set[tuple[int, int]], bool]:
    """Every comparable pair that could reach MIN_COSINE: the pairs a full pairwise scan would report, found by
    probing each tool's prefix terms in an index of all terms. Stops (truncated) after MAX_COMPARISONS probes."""
    postings: dict[str, list[int]] = defaultdict(list)
    for index, vec in enumerate(vectors):
        for term in vec:
            postings[term].append(index)
    comparable = _Comparable(tools)
    count = len(vectors)
    seen: set[int] = set()  # the pairs found, as left * count + right (left < right)
    probes = 0
    for left, vec in enumerate(vectors):
        for term in _prefix(vec):
            for right in postings[term]:
                key = left * count + right if left < right else right * count + left
                if right == left or key in seen:
                    continue
                probes += 1
                if probes > MAX_COMPARISONS:
                    return {divmod(key, count) for key in seen}, True
                if comparable(left, right):
                    seen.add(key)
    return {divmod(key, count) for key in seen}, False


def check(ctx: LintContext) -> Iterator[Finding]:
    tools = [t for t in ctx.tools if t.name_is_string]
    if len(tools) < 2:
        return
    vectors = _vectors(tools)
    pairs, truncated = _candidates(tools, vectors)
    for left, right in sorted(pairs):
        a, b = tools[left], tools[right]
        score = _cosine(vectors[left], vectors[right])
        if score >= MIN_COSINE:
            yield RULE.finding(b.name, f"overlaps with `{a.name}` (similarity {score:.2f}, shared parameters)",
                               evidence=f"{a.name} ~ {b.name}")
    if truncated:
        yield RULE.finding(None, f"overlap check stopped after {MAX_COMPARISONS} candidate pairs; some pairs unchecked",
                           severity="info", fix="")
