"""What the scan works out from a finished MCP session while the server ends (`server_end` waits on the engine: the
server's own exit after EOF, or its SIGTERM): the lint over the listing, the probe phase's summary (P1-P11, B1-B7)
and, once both are done, the validators of the report models that the last stages build (built on first use,
scanner/report/base.py: about 30 ms of CPU that `assemble` and teardown would otherwise spend after the engine is
done).

The scan reads each value where it read it before (stage `lint`, then `probes`), so an exception is charged to the
same stage. The scan waits for the models before it builds any model itself. Its other threads (the second
listing's, provenance's) may build models meanwhile: pydantic serializes model builds itself since its rebuild lock
(`pydantic.main._rebuild_lock`, 2.14 has it); an older pydantic does not, and there the models are built only if
every other thread of the scan has returned (else left to `assemble`, as before).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from concurrent.futures import Future, ThreadPoolExecutor, wait
from dataclasses import dataclass
from typing import Any

import pydantic.main
from pydantic import BaseModel

from scanner.conformance.model import CheckResult, ConformanceReport
from scanner.pipeline.inventory_model import Inventory
from scanner.pipeline.lint import lint
from scanner.probes import phase as probe_phase
from scanner.report.model import (
    Finding,
    Report,
    SandboxInfo,
    Score,
    ScannerInfo,
    ServerEnding,
    ServerInfo,
    TargetInfo,
    TeardownInfo,
    Timings,
    ToolScore,
)

BUILDS_GUARDED = getattr(pydantic.main, "_rebuild_lock", None) is not None  # two threads may build models at once
# The models first built after the session (served definitions, conformance, teardown, assemble), in that order.
LAST_MODELS: tuple[type[BaseModel], ...] = (
    ServerInfo, ScannerInfo, CheckResult, ConformanceReport, TeardownInfo, TargetInfo, Report, Timings, SandboxInfo,
    ServerEnding, ToolScore, Score)


@dataclass(frozen=True)
class SessionAnalysis:
    lint: Future[list[Finding]]
    probes: Future[probe_phase.ProbePhaseReport]
    models: Future[None]  # LAST_MODELS built; waited for (not read: a failure there is assemble's, as before)

    def models_built(self) -> None:
        wait([self.models])


def analyse(pool: ThreadPoolExecutor, inventory: Inventory, probed: probe_phase.ProbePhaseResult,
            others: Sequence[Future[Any]], *, lint: Callable[[Inventory], list[Finding]] = lint,
            summarize: Callable[[probe_phase.ProbePhaseResult], probe_phase.ProbePhaseReport] = probe_phase.summarize,
            ) -> SessionAnalysis:
    """Start `lint` and `summarize` in `pool`, then the models once both have returned, if `others` (the scan's
    other threads) have too."""
    linted = pool.submit(lint, inventory)
    summarized = pool.submit(summarize, probed)
    return SessionAnalysis(lint=linted, probes=summarized,
                           models=pool.submit(_build_after, [linted, summarized], list(others)))


def _build_after(before: list[Future[Any]], others: list[Future[Any]]) -> None:
    wait(before)  # submitted ahead of this one, so running or done: this never waits on a queued task
    if BUILDS_GUARDED or all(future.done() for future in others):
        for model in LAST_MODELS:
            model.model_rebuild()
