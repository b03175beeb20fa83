"""The batch's own engine calls (the sweep of what dead scans left, before and after the run; `--cache-size`'s eviction
after each target done) against an engine that does not answer (one a hostile server keeps busy, or restarting):
said on the progress stream, never raised. Raised, one eviction took the whole batch down mid-run (every scan in
flight lost), and the sweep after the run lost the summary and the batch's exit code (1 for a blocked target)."""

from __future__ import annotations

import socket
from collections.abc import Iterator
from pathlib import Path

import docker
import pytest

from sandbox.core import engine
from scanner.batch.jobs import JobResult
from scanner.batch.runner import BatchOptions, run_batch
from scanner.batch.store import Store
from scanner.cli.batch import _cache_eviction, dead_scan_sweep
from tests.test_batch_store import A, B, _FakeBackend, _Quiet, _report


@pytest.fixture
def silent_engine(tmp_path: Path) -> Iterator[docker.DockerClient]:
    """A client of an engine socket that takes connections and never answers (each call times out after 1 s)."""
    path = tmp_path / "engine.sock"
    with socket.socket(socket.AF_UNIX) as listener:
        listener.bind(str(path))
        listener.listen(16)
        client = engine.bound(docker.DockerClient(base_url=f"unix://{path}", version="1.41", timeout=1))
        yield client
        client.close()


def test_an_eviction_the_engine_does_not_answer_is_said_and_the_batch_goes_on(
        tmp_path: Path, silent_engine: docker.DockerClient) -> None:
    quiet = _Quiet()
    with Store.open(tmp_path / "batch.sqlite") as store:
        store.add([A, B])
        backend = _FakeBackend({A.key: [JobResult(A.key, 1, 0, _report(name="server-a"), "", 1.0)],
                                B.key: [JobResult(B.key, 1, 0, _report(name="server-b"), "", 1.0)]})
        run_batch(store, backend, BatchOptions(out=tmp_path, retries=0), quiet, sleep=lambda _s: None,
                  after_done=_cache_eviction(silent_engine, 1, quiet))
        assert [row.state for row in store.rows()] == ["done", "done"]
    evictions = [line for line in quiet.lines if line.startswith("--cache-size: could not evict")]
    assert evictions and "EngineTimeout: the engine did not answer GET /images/json within 1 s" in evictions[0]


def test_a_sweep_the_engine_does_not_answer_is_said_not_raised(silent_engine: docker.DockerClient) -> None:
    quiet = _Quiet()
    dead_scan_sweep(silent_engine, quiet)()
    assert quiet.lines == ["could not look for what dead scans left (EngineTimeout: the engine did not answer GET "
                           "/containers/json within 1 s); `mcp-sandbox gc` removes it"]


def test_a_sweep_of_an_engine_gone_is_said_not_raised(tmp_path: Path) -> None:
    gone = engine.bound(docker.DockerClient(base_url=f"unix://{tmp_path / 'none.sock'}", version="1.41", timeout=1))
    quiet = _Quiet()
    dead_scan_sweep(gone, quiet)()
    assert len(quiet.lines) == 1 and quiet.lines[0].startswith("could not look for what dead scans left "
                                                               "(ConnectionError: ")
