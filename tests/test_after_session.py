"""The analysis the scan runs while the server ends (scanner/pipeline/after_session.py): the report models are
built there beside the scan's other threads only where pydantic guards two threads building models at once, and a
failing lint or summary is read, and charged, where the scan reads it."""

from __future__ import annotations

from concurrent.futures import Future, ThreadPoolExecutor
from typing import Any

import pytest

from scanner.pipeline import after_session
from scanner.pipeline.inventory import Inventory
from scanner.probes.phase import ProbePhaseReport, ProbePhaseResult
from scanner.probes.runner import ProbeOptions


class CountedModel:
    built = 0

    @classmethod
    def model_rebuild(cls) -> None:
        cls.built += 1


def _analysis(others: list[Future[Any]], **stages: Any) -> after_session.SessionAnalysis:
    with ThreadPoolExecutor(max_workers=3) as pool:
        analysis = after_session.analyse(pool, Inventory(), ProbePhaseResult(options=ProbeOptions()), others,
                                         **{"lint": lambda _: [], "summarize": lambda _: ProbePhaseReport(),
                                            **stages})
        analysis.models_built()
    return analysis


@pytest.fixture
def counted(monkeypatch: pytest.MonkeyPatch) -> type[CountedModel]:
    CountedModel.built = 0
    monkeypatch.setattr(after_session, "LAST_MODELS", (CountedModel,))
    return CountedModel


def test_the_models_are_built_once_the_lint_and_the_summary_have_returned(counted: type[CountedModel]) -> None:
    done: Future[Any] = Future()
    done.set_result(None)
    analysis = _analysis([done])
    assert counted.built == 1 and analysis.lint.result() == [] and analysis.probes.result() == ProbePhaseReport()


@pytest.mark.parametrize("guarded", [False, True])
def test_the_models_wait_for_no_other_thread_only_where_pydantic_guards_its_builds(
        counted: type[CountedModel], monkeypatch: pytest.MonkeyPatch, guarded: bool) -> None:
    monkeypatch.setattr(after_session, "BUILDS_GUARDED", guarded)
    still_running: Future[Any] = Future()  # the second listing, say
    _analysis([still_running])
    assert counted.built == (1 if guarded else 0)  # unguarded: left to assemble, which runs once every thread is done


def test_a_failing_lint_is_raised_where_the_scan_reads_it(counted: type[CountedModel]) -> None:
    def broken(_: Inventory) -> list[Any]:
        raise ValueError("bad")
    analysis = _analysis([], lint=broken)
    with pytest.raises(ValueError, match="bad"):
        analysis.lint.result()
    assert analysis.probes.result() == ProbePhaseReport() and counted.built == 1

