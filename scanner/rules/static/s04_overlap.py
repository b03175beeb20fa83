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
from scanner.vocabulary import ALL_GROUPED_VERBS, name_tokens

RULE = rule("S4")


MIN_COSINE = 0.5
MIN_SHARED_PARAMS = 0.5
MAX_COMPARISONS = 200_000  # candidate pairs examined; past this the rule says it stopped (an info finding)
STOP_WORDS = frozenset({"a", "an", "the", "of", "to", "and", "or", "in", "on", "for", "with", "by", "is", "are", "be",
                        "it", "this", "that", "from", "as", "at", "if", "its", "can", "will", "all", "any", "use"})

Vector = dict[str, float]


def _terms(tool: ToolView) -> list[str]:
    text_terms = [w.lower() for w in tool.description_words]
    return [t for t in tool.tokens + name_tokens(tool.title) + text_terms if t not in STOP_WORDS]


def _vectors(tools: list[ToolView]) -> list[Vector]:
    counts = [Counter(_terms(tool)) for tool in tools]
    doc_freq: Counter[str] = Counter()
    for c in counts:
        doc_freq.update(c.keys())
    n = len(tools)
    idf = {term: math.log((1 + n) / (1 + df)) + 1.0 for term, df in doc_freq.items()}  # once per term, not per tool
    vectors: list[Vector] = []
    for c in counts:
        vec = {term: tf * idf[term] for term, tf in c.items()}
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
    """Worth comparing: other names, no two different verbs, no two different objects (create_issue,
    create_pull_request), and at least MIN_SHARED_PARAMS of parameters shared."""
    return _Comparable([a, b])(0, 1)


def _objects(tool: ToolView) -> frozenset[str]:
    """The words of a name after its verb (create_pull_request: pull, request); none when the name has no verb."""
    for index, token in enumerate(tool.tokens[:2]):
        if token in ALL_GROUPED_VERBS:
            return frozenset(tool.tokens[index + 1:])
    return frozenset()


def _same_word(a: str, b: str) -> bool:
    """One word is the other, or the start of it (issue/issues, repo/repository)."""
    return a.startswith(b) or b.startswith(a)


def _other_objects(a: frozenset[str], b: frozenset[str]) -> bool:
    """Both names say what they act on, in words the other does not share: create_issue and create_pull_request
    differ by name, however alike the text around them (the GitHub server's descriptions are one template)."""
    return bool(a and b) and a.isdisjoint(b) and not any(_same_word(x, y) for x in a for y in b)


class _Comparable:
    """`_comparable` over the tools by index, each tool's name, verb, object words and parameter names read once."""

    def __init__(self, tools: list[ToolView]) -> None:
        self.names = [tool.name for tool in tools]
        self.verbs = [tool.verb or None for tool in tools]
        self.objects = [_objects(tool) for tool in tools]
        self.params = [frozenset(p.name for p in tool.params) for tool in tools]

    def __call__(self, left: int, right: int) -> bool:
        verb_a, verb_b = self.verbs[left], self.verbs[right]
        if verb_a and verb_b and verb_a != verb_b:
            return False
        return self.alike(left, right)

    def alike(self, left: int, right: int) -> bool:
        """The rest of `_comparable`, for two tools whose verbs are known not to differ."""
        if self.names[left] == self.names[right]:
            return False
        names_a, names_b = self.params[left], self.params[right]
        if (names_a or names_b) and len(names_a & names_b) / max(len(names_a), len(names_b)) < MIN_SHARED_PARAMS:
            return False
        return not _other_objects(self.objects[left], self.objects[right])


class _Postings:
    """The tools holding each term (in tool order), and the same restricted to the tools a verb can be compared
    with (that verb's, and those without one; built for a term when first asked): a tool is only ever compared with
    those."""

    def __init__(self, vectors: list[Vector], verbs: list[str | None]) -> None:
        self.all: dict[str, list[int]] = defaultdict(list)
        for index, vec in enumerate(vectors):
            for term in vec:
                self.all[term].append(index)
        self._verbs = verbs
        self._compatible: dict[tuple[str, str], list[int]] = {}

    def compatible(self, term: str, verb: str | None) -> list[int]:
        if verb is None:
            return self.all[term]
        key = (term, verb)
        if key not in self._compatible:
            verbs = self._verbs
            self._compatible[key] = [i for i in self.all[term] if verbs[i] is None or verbs[i] == verb]
        return self._compatible[key]


def _candidates(tools: list[ToolView], vectors: list[Vector]) -> tuple[set[tuple[int, int]], bool]:
    """Every comparable pair that could reach MIN_COSINE: the pairs a full pairwise scan would report, found by
    probing each tool's prefix terms in an index of all terms. Stops (truncated) after MAX_COMPARISONS probes.

    A probe is a (tool, other tool holding the term) not yet found; the tools with another verb are probes that can
    never be found, so they are counted without being visited, and only the rest is looked at. Where the bound could
    fall inside one term's tools, they are visited one by one in index order, so the pairs found by the time the
    check stops are exactly those of visiting every probe in order."""
    comparable = _Comparable(tools)
    postings = _Postings(vectors, comparable.verbs)
    count = len(vectors)
    seen: set[int] = set()  # the pairs found, as left * count + right (left < right)
    probes = 0
    for left, vec in enumerate(vectors):
        for term in _prefix(vec):
            listed = postings.all[term]
            if probes + len(listed) > MAX_COMPARISONS:  # the bound may fall in this term's tools
                probes = _probe_in_order(left, listed, comparable, seen, probes)
                if probes > MAX_COMPARISONS:
                    return {divmod(key, count) for key in seen}, True
                continue
            probes += len(listed)
            for right in postings.compatible(term, comparable.verbs[left]):
                key = left * count + right if left < right else right * count + left
                if right == left or key in seen:
                    probes -= 1
                elif comparable.alike(left, right):
                    seen.add(key)
    return {divmod(key, count) for key in seen}, False


def _probe_in_order(left: int, listed: list[int], comparable: _Comparable, seen: set[int], probes: int) -> int:
    """Probe `left` against each of `listed` in order, adding the pairs found to `seen`, until past
    MAX_COMPARISONS probes; the probes counted so far."""
    count = len(comparable.names)
    for right in listed:
        key = left * count + right if left < right else right * count + left
        if right == left or key in seen:
            continue
        probes += 1
        if probes > MAX_COMPARISONS:
            return probes
        if comparable(left, right):
            seen.add(key)
    return probes


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
