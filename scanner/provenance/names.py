"""Package names: the comparison form and edit distance."""

from __future__ import annotations


def comparison_name(name: str) -> str:
    """The form names are compared in: case ignored, '-', '_' and '.' removed (so litellm == Lite_LLM == lite.llm)."""
    return "".join(ch for ch in name.casefold() if ch not in "-_.")


def edit_distance(a: str, b: str, limit: int | None = None) -> int:
    """Damerau-Levenshtein (optimal string alignment) distance; stops early past limit when given."""
    if a == b:
        return 0
    if limit is not None and abs(len(a) - len(b)) > limit:
        return limit + 1
    prev2: list[int] = []
    prev = list(range(len(b) + 1))
    for i, ca in enumerate(a, 1):
        cur = [i] + [0] * len(b)
        for j, cb in enumerate(b, 1):
            cost = 0 if ca == cb else 1
            cur[j] = min(prev[j] + 1, cur[j - 1] + 1, prev[j - 1] + cost)
            if i > 1 and j > 1 and ca == b[j - 2] and a[i - 2] == cb:
                cur[j] = min(cur[j], prev2[j - 2] + 1)
        if limit is not None and min(cur) > limit:
            return limit + 1
        prev2, prev = prev, cur
    return prev[-1]
