"""`vet` on its fixture corpus (tests/fixtures/vet): every finding a file's `expect:` markers name and no other, in
TypeScript, JavaScript and Python; every rule fires in each language's dirty server; the migrated twins and the near
misses stay clean; suppression directives are counted; the SDK major is read from each kind of manifest."""

from __future__ import annotations

import pytest

from scanner.vet.catalogue import BY_ID
from scanner.vet.model import Tier
from tests.vet_helpers import CORPUS, actual_of, expected_of, vet

CORPORA = ("dirty_ts", "dirty_js", "dirty_py", "clean_ts", "clean_py", "negatives", "suppress", "sdk_py_v2",
           "sdk_py_v2_clean", "sdk_ts_v2", "sdk_ts_v2_clean")


@pytest.mark.parametrize("corpus", CORPORA)
def test_findings_are_exactly_the_markers(corpus: str) -> None:
    root = CORPUS / corpus
    result = vet(root)
    expected, actual = expected_of(root), actual_of(result)
    assert sorted((expected - actual).elements()) == [], "missed"
    assert sorted((actual - expected).elements()) == [], "reported but not expected"
    sources = [p for p in root.rglob("*") if p.suffix in (".ts", ".mjs", ".cjs", ".js", ".py")]
    assert result.files_scanned == len(sources)


@pytest.mark.parametrize("corpus", ("dirty_ts", "dirty_js", "dirty_py"))
def test_every_protocol_rule_fires_in_every_language(corpus: str) -> None:
    """The dirty servers declare SDK v1, so the SDK-migration advisories are held back there (and counted): the
    advisories have their own corpora, tests/test_vet_sdk.py."""
    result = vet(CORPUS / corpus)
    assert {f.rule_id for f in result.findings} == {i for i, r in BY_ID.items() if r.tier is not Tier.ADVISORY}
    assert sum(result.held_back.values()) > 0


@pytest.mark.parametrize("corpus", ("clean_ts", "clean_py", "negatives", "sdk_py_v2_clean", "sdk_ts_v2_clean"))
def test_migrated_twins_and_near_misses_are_clean(corpus: str) -> None:
    result = vet(CORPUS / corpus)
    assert result.findings == [] and result.suppressed == []
    assert result.files_scanned > 0


def test_suppressions_are_counted_by_directive() -> None:
    result = vet(CORPUS / "suppress")
    kinds = sorted((s.file, s.line, s.rule_id, s.directive) for s in result.suppressed)
    assert kinds == [
        ("all_off.js", 3, "ERROR_CODE_32002", "disable-file"), ("all_off.js", 3, "PING_REMOVED", "disable-file"),
        ("directives.ts", 4, "PING_REMOVED", "disable-line"), ("directives.ts", 5, "PING_REMOVED", "disable-line"),
        ("directives.ts", 7, "TASKS_LIST_REMOVED", "disable-next-line"),
        ("directives.ts", 9, "TASKS_RESULT_REMOVED", "disable-next-line"),
        ("directives.ts", 11, "PING_REMOVED", "disable-line"),
        ("file_level.py", 5, "ERROR_CODE_32002", "disable-file")]


def test_the_sdk_major_comes_from_the_nearest_manifest() -> None:
    assert vet(CORPUS / "sdk").sdk == {
        "ts_v1/package.json": "1", "ts_v2/package.json": "2", "ts_both/package.json": "both",
        "py_v1_uvlock/uv.lock": "1", "py_v2_requirements/requirements.txt": "2", "py_both/pyproject.toml": "both",
        "py_none/pyproject.toml": "undetermined"}


def test_min_confidence_drops_the_lower_ones() -> None:
    everything = vet(CORPUS / "dirty_ts").findings
    high = vet(CORPUS / "dirty_ts", min_confidence="high").findings
    assert {f.confidence for f in everything} == {"high", "medium"}
    assert high == [f for f in everything if f.confidence == "high"]


def test_the_confidence_gradient() -> None:
    """The Python dirty server holds all three confidences; each --min-confidence keeps those at or above it."""
    levels = ("low", "medium", "high")
    counts = {level: len(vet(CORPUS / "dirty_py", min_confidence=level).findings) for level in levels}
    everything = vet(CORPUS / "dirty_py").findings
    assert {f.confidence for f in everything} == {"high", "medium", "low"}
    assert counts["low"] == len(everything) > counts["medium"] > counts["high"] > 0
    assert counts["medium"] == len([f for f in everything if f.confidence != "low"])


def test_every_finding_quotes_the_spec_and_links_the_dated_page() -> None:
    for finding in vet(CORPUS / "dirty_py").findings:
        assert finding.doc_url.startswith("https://modelcontextprotocol.io/specification/2026-07-28/")
        assert "/draft/" not in finding.doc_url
        assert 'the specification says "' in finding.message and finding.after
        assert finding.before.startswith(f"{finding.line}: ")
