"""S4's candidate index finds exactly the pairs a full pairwise comparison finds, on random tool sets."""

from __future__ import annotations

import random
from typing import Any

import pytest

from scanner.rules.static import s04_overlap as s04
from scanner.rules.static.context import LintContext, build_context

VERBS = ["get", "list", "create", "delete", "fetch", None]
NOUNS = ["user", "order", "file", "repo", "issue", "note"]
WORDS = "the record item value json list details status owner date text body title id query page".split()
PARAMS = ["id", "name", "limit", "query", "path", "owner"]


def _tools(rng: random.Random, count: int) -> list[dict[str, Any]]:
    tools = []
    for i in range(count):
        verb, noun = rng.choice(VERBS), rng.choice(NOUNS)
        name = f"{verb}_{noun}" if verb else f"{noun}_tool"
        if rng.random() < 0.5:
            name += f"_{i}"
        props = {p: {"type": "string"} for p in rng.sample(PARAMS, rng.randint(0, 3))}
        tool: dict[str, Any] = {"name": name, "description": " ".join(rng.choices(WORDS, k=rng.randint(0, 12))),
                                "inputSchema": {"type": "object", "properties": props}}
        if rng.random() < 0.2:
            tool["title"] = " ".join(rng.choices(NOUNS + WORDS, k=2))
        tools.append(tool)
    return tools


def _brute_force(ctx: LintContext) -> list[tuple[str | None, str]]:
    """The rule's definition, every pair compared: the reference the index must equal."""
    tools = [t for t in ctx.tools if t.name_is_string]
    vectors = s04._vectors(tools)
    out = []
    for left in range(len(tools)):
        for right in range(left + 1, len(tools)):
            a, b = tools[left], tools[right]
            if not s04._comparable(a, b):
                continue
            score = s04._cosine(vectors[left], vectors[right])
            if score >= s04.MIN_COSINE:
                out.append((b.name, f"overlaps with `{a.name}` (similarity {score:.2f}, shared parameters)"))
    return out


@pytest.mark.parametrize("seed", range(40))
def test_indexed_overlap_equals_brute_force(seed: int) -> None:
    rng = random.Random(seed)
    ctx = build_context(_tools(rng, rng.randint(2, 60)))
    indexed = [(f.tool, f.message) for f in s04.check(ctx)]
    assert indexed == _brute_force(ctx)


def test_the_random_sets_do_overlap() -> None:
    """The equality above is not vacuous: the generated sets hold many overlapping pairs."""
    total = sum(len(_brute_force(build_context(_tools(random.Random(s), 60)))) for s in range(20))
    assert total > 50


def test_a_pair_sharing_only_common_terms_is_still_found() -> None:
    """A term shared by every tool is not skipped: tools that differ only in such terms still overlap."""
    tools = [{"name": f"t_{i}", "description": " ".join(f"w{(i + k) % 50}" for k in range(20))} for i in range(300)]
    ctx = build_context(tools)
    found = [(f.tool, f.message) for f in s04.check(ctx)]
    assert found and found == _brute_force(ctx)


def test_past_the_bound_it_says_the_check_stopped(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(s04, "MAX_COMPARISONS", 50)
    tools = [{"name": ["read_record", "fetch_record"][i % 2], "description": "read the shared record"} for i in range(40)]
    found = list(s04.check(build_context(tools)))
    assert found[-1].severity == "info" and "stopped after 50 candidate pairs" in found[-1].message


def _in_order(tools: list[Any], vectors: list[Any]) -> tuple[set[tuple[int, int]], bool]:
    """The candidate search visiting every probe one by one, in order: where the bound stops it is the reference."""
    postings: dict[str, list[int]] = {}
    for index, vec in enumerate(vectors):
        for term in vec:
            postings.setdefault(term, []).append(index)
    seen: set[tuple[int, int]] = set()
    probes = 0
    for left, vec in enumerate(vectors):
        for term in s04._prefix(vec):
            for right in postings[term]:
                pair = (min(left, right), max(left, right))
                if right == left or pair in seen:
                    continue
                probes += 1
                if probes > s04.MAX_COMPARISONS:
                    return seen, True
                if s04._comparable(tools[left], tools[right]):
                    seen.add(pair)
    return seen, False


@pytest.mark.parametrize("bound", [1, 7, 60, 400, 3_000, 200_000])
def test_the_bound_stops_where_visiting_every_probe_would(monkeypatch: pytest.MonkeyPatch, bound: int) -> None:
    """Probes of tools with another verb are counted without being visited: the pairs found when the check stops,
    and whether it stops, are those of the one-by-one search."""
    monkeypatch.setattr(s04, "MAX_COMPARISONS", bound)
    for seed in range(12):
        rng = random.Random(seed)
        tools = [t for t in build_context(_tools(rng, rng.randint(20, 150))).tools if t.name_is_string]
        vectors = s04._vectors(tools)
        assert s04._candidates(tools, vectors) == _in_order(tools, vectors), seed
