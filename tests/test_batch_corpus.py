"""Issue 15's done-when: one batch of real npm and PyPI servers gives the same verdicts embedded and through Celery.

`scripts/batch_corpus.py` ran the corpus both ways and recorded it in tests/data/batch_corpus.json; the fast tests
review that recording (every pinned server in both modes, done, the same state, status, verdict, score and findings
in both — recomputed here, not read from the recorded comparison), and the live test runs a small subset of the
same servers the same way (a real redis-server and two real `mcp-sandbox worker` processes).
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from tests.test_rules_corpus import load_script

ROOT = Path(__file__).resolve().parent.parent
RECORDING = ROOT / "tests" / "data" / "batch_corpus.json"
LIVE_SUBSET = ("mcp-server-time", "server-sequential-thinking")  # small, one of each ecosystem
MODES = ("embedded", "celery")


def _recording() -> dict[str, Any]:
    return json.loads(RECORDING.read_text(encoding="utf-8"))


def test_the_recording_is_the_scripts_pinned_servers_in_both_modes() -> None:
    script, recorded = load_script("batch_corpus"), _recording()
    lines = {s.name: s.line for s in script.SERVERS}
    assert recorded["servers"] == lines
    assert len(lines) >= 10
    assert {line.split(":")[0] for line in lines.values()} == {"npm", "pypi"}
    for mode in MODES:
        assert sorted(recorded["modes"][mode]["targets"]) == sorted(lines.values()), mode
        assert all("@" in line or "==" in line for line in lines.values())  # pinned: no drift between runs


def test_every_target_got_the_same_result_embedded_and_through_celery() -> None:
    script, recorded = load_script("batch_corpus"), _recording()
    embedded, celery = (recorded["modes"][mode]["targets"] for mode in MODES)
    assert script.compare(embedded, celery)["differences"] == {}
    assert recorded["comparison"] == script.compare(embedded, celery)
    assert {t["state"] for t in [*embedded.values(), *celery.values()]} == {"done"}
    complete = [target for target, row in embedded.items() if row["status"] == "complete"]
    assert len(complete) >= 10  # vetted completely, in both modes (the statuses are equal)
    assert recorded["modes"]["celery"]["workers"] == 2


def test_the_recording_says_when_where_and_how_long() -> None:
    recorded = _recording()
    assert recorded["date"][:4].isdigit() and recorded["machine"]["cores"] >= 1
    for mode in MODES:
        run = recorded["modes"][mode]
        assert run["wall_seconds"] > 0 and run["exit"] in (0, 1, 3)
        assert all(row["seconds"] >= row["scan_seconds"] > 0 for row in run["targets"].values())


def test_the_script_names_a_difference_per_field_and_a_missing_target() -> None:
    script = load_script("batch_corpus")
    row = {"state": "done", "status": "complete", "verdict": "pass", "score": 100, "findings": ["S1:info:-"]}
    assert script.compare({"a": row}, {"a": dict(row)})["differences"] == {}
    other = {"a": {**row, "verdict": "block", "findings": []}}
    comparison = script.compare({"a": row, "b": row}, other)
    assert comparison["differences"] == {"a": ["verdict", "findings"], "b": ["missing in celery"]}
    assert comparison["identical_verdicts"] is False


@pytest.mark.docker
@pytest.mark.registry
def test_a_small_real_batch_gives_the_same_results_embedded_and_through_celery(tmp_path: Path, no_leftovers) -> None:
    pytest.importorskip("celery", reason="needs mcp-sandbox[distributed]")
    script = load_script("batch_corpus")
    servers = [s for s in script.SERVERS if s.name in LIVE_SUBSET]
    both = script.run_both(servers, tmp_path)
    assert both["comparison"]["differences"] == {}, both["modes"]
    for mode in MODES:
        rows = both["modes"][mode]["targets"]
        assert sorted(rows) == sorted(s.line for s in servers)
        assert {(r["state"], r["status"]) for r in rows.values()} == {("done", "complete")}, rows
    recorded = _recording()["modes"]["embedded"]["targets"]
    assert {t: r["verdict"] for t, r in both["modes"]["embedded"]["targets"].items()} == \
        {t: recorded[t]["verdict"] for t in both["modes"]["embedded"]["targets"]}
