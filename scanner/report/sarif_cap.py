"""How many results a SARIF log keeps: code scanning stores 5,000 results of a run (not necessarily the most severe)
and rejects a log of more than 25,000, so a scan of thousands of tools, or `vet` of thousands of files, keeps the
5,000 that count most and says how many it left out. Shared by the report's SARIF and `vet`'s; standard library only,
so `vet` does not import the report model for it."""

from __future__ import annotations

from collections.abc import Sequence

from scanner.report.severity import most_severe_first

MAX_RESULTS = 5_000
OMITTED_WHY = ("results past 5,000 (what code scanning stores of a run) were left out, the least severe first; "
               "the JSON report holds every finding")


def kept_indices(severities: Sequence[str], suppressed: Sequence[bool] | None = None) -> list[int]:
    """The indices of the results a log keeps, in their order: all of them up to MAX_RESULTS, else the MAX_RESULTS
    that count most (active before suppressed, then most severe first, then in the given order)."""
    if len(severities) <= MAX_RESULTS:
        return list(range(len(severities)))
    hidden = suppressed if suppressed is not None else [False] * len(severities)
    ranked = sorted(range(len(severities)), key=lambda i: (hidden[i], most_severe_first(severities[i])))
    return sorted(ranked[:MAX_RESULTS])


def omitted_properties(total: int, kept: int) -> dict[str, object]:
    """What a run's properties say of the results left out (nothing when none were)."""
    return {"resultsOmitted": total - kept, "resultsOmittedWhy": OMITTED_WHY} if kept < total else {}
