"""The distributed batch for real: a redis-server, two `mcp-sandbox worker` processes, and `batch --broker` writing
the same store and summary as the embedded mode (the zoo's verdicts equal the embedded run's)."""

from __future__ import annotations

import json
import sqlite3
import subprocess
from pathlib import Path

import pytest

from tests.celery_helpers import redis_server, workers
from tests.sandbox_helpers import CLI, REPO, ZOO

pytestmark = pytest.mark.docker
pytest.importorskip("celery", reason="needs mcp-sandbox[distributed]")

COMMANDS = ("zoo-plain", "zoo-probe-egress")


def _batch(targets: Path, out: Path, *extra: str) -> subprocess.Popen[str]:
    return subprocess.Popen([*CLI, "batch", str(targets), "--out", str(out), "--retries", "0", *extra], cwd=REPO,
                            stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)


def _verdicts(out: Path) -> dict[str, tuple[str, str | None]]:
    summary = json.loads((out / "summary.json").read_text())
    return {t["target"]: (t["state"], t["verdict"]) for t in summary["targets"]}


def test_a_celery_batch_gives_the_embedded_verdicts(tmp_path: Path, no_leftovers) -> None:
    targets = tmp_path / "targets.txt"
    targets.write_text("".join(f"{ZOO} --command {c}\n" for c in COMMANDS))
    embedded = _batch(targets, tmp_path / "embedded", "--jobs", "2")
    with redis_server(tmp_path / "redis") as url, workers(url, tmp_path / "logs"):
        distributed = _batch(targets, tmp_path / "celery", "--broker", url, "--jobs", "4")
        _, celery_err = distributed.communicate(timeout=400)
    _, embedded_err = embedded.communicate(timeout=400)
    assert distributed.returncode == embedded.returncode == 1, (celery_err, embedded_err)  # egress blocks
    assert "queueing up to 4 scans at once on redis://127.0.0.1:" in celery_err
    verdicts = _verdicts(tmp_path / "celery")
    assert verdicts == _verdicts(tmp_path / "embedded")
    assert {state for state, _ in verdicts.values()} == {"done"}
    assert {v for t, (_, v) in verdicts.items() if "zoo-probe-egress" in t} == {"block"}
    for entry in json.loads((tmp_path / "celery" / "summary.json").read_text())["targets"]:
        report = json.loads((tmp_path / "celery" / entry["report"]).read_text())
        assert report["verdict"] == entry["verdict"] and report["status"] == "complete"


def test_a_bad_target_fails_through_the_workers_with_its_reason(tmp_path: Path) -> None:
    empty = tmp_path / "empty"
    empty.mkdir()
    (empty / "package.json").write_text('{"name": "celery-test-no-bin", "version": "1.0.0"}')
    targets = tmp_path / "targets.txt"
    targets.write_text(f"{empty}\n")
    out = tmp_path / "out"
    with redis_server(tmp_path / "redis") as url, workers(url, tmp_path / "logs", count=1):
        result = subprocess.run([*CLI, "batch", str(targets), "--out", str(out), "--broker", url], cwd=REPO,
                                capture_output=True, text=True, timeout=180)
    assert result.returncode == 3, result.stderr
    connection = sqlite3.connect(out / "batch.sqlite")
    state, attempts, error = connection.execute("SELECT state, attempts, error FROM targets").fetchone()
    connection.close()
    assert (state, attempts) == ("failed", 1)
    assert "celery-test-no-bin installs no command" in error  # the worker's scan's own `error:` line
