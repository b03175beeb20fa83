"""The engine work a package scan begins before the scan machinery is imported (scanner/pipeline/head_start.py):
what starts it and what does not (no Docker), and in a real engine that a scan takes its session and sink over, and
that one no scan took leaves nothing behind."""

from __future__ import annotations

from pathlib import Path

import docker
import pytest

from scanner.pipeline import head_start as head_start_module
from scanner.pipeline.head_start import HeadStart
from scanner.pipeline.inventory import Timeouts
from scanner.pipeline.scan import ScanOptions, run_scan
from sandbox.core import labels
from sandbox.run.policy import RunPolicy
from tests.cli_helpers import run_main
from tests.sandbox_helpers import ZOO, labelled_containers


class Recorder:
    """Stands in for HeadStart: records that one was begun (no engine is asked anything)."""

    begun: list[dict[str, object]] = []

    def __init__(self, **kwargs: object) -> None:
        Recorder.begun.append(kwargs)

    def __enter__(self) -> None:
        return None

    def __exit__(self, *exc: object) -> None:
        return None


@pytest.fixture
def recorded(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> list[dict[str, object]]:
    Recorder.begun = []
    monkeypatch.setattr(head_start_module, "HeadStart", Recorder)
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("DOCKER_HOST", f"unix://{tmp_path}/no-engine.sock")
    return Recorder.begun


@pytest.mark.parametrize("args", [
    ["npm:postmark-mcp@1.0.16"],  # a known-bad release: refused before anything starts
    ["npm:/@scope/name"],  # a target that does not parse
    ["--", "bash", "-c", "cd x && npx y"],  # a launch command that maps to nothing
    ["docker:alpine:3"],  # an image scan starts its own engine work
    ["--url", "http://127.0.0.1:9/mcp"],  # a remote server: nothing is sandboxed
    ["npm:x", "--memory", "1k"],  # a bad flag
])
def test_nothing_is_begun_for_a_scan_refused_before_the_engine_or_not_sandboxed_here(
        recorded: list[dict[str, object]], monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str],
        args: list[str]) -> None:
    run_main(monkeypatch, capsys, "scan", "-q", "--json", "r.json", *args)
    assert recorded == []


def test_a_package_scan_begins_it_with_the_run_policys_host_name_before_resolving(
        recorded: list[dict[str, object]], monkeypatch: pytest.MonkeyPatch,
        capsys: pytest.CaptureFixture[str]) -> None:
    """(Without an engine the scan then fails on it, exit 3, as it did when it connected itself.)"""
    run_main(monkeypatch, capsys, "scan", "-q", "--network", "none", "npm:x@1.0.0")
    assert len(recorded) == 1 and recorded[0]["observe"] is False and isinstance(recorded[0]["hostname"], str)


def test_no_engine_is_the_scans_error_where_it_asks_for_the_engine(monkeypatch: pytest.MonkeyPatch,
                                                                    capsys: pytest.CaptureFixture[str],
                                                                    tmp_path: Path) -> None:
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("DOCKER_HOST", f"unix://{tmp_path}/no-engine.sock")
    (tmp_path / "pkg").mkdir()
    (tmp_path / "pkg" / "package.json").write_text('{"name": "x", "version": "1.0.0", "bin": {"x": "x.js"}}')
    code, _, err = run_main(monkeypatch, capsys, "scan", "-q", "pkg")
    assert code == 3 and err.strip().splitlines()[-1].startswith("error: no Docker engine answers"), err


@pytest.mark.docker
def test_one_no_scan_took_is_torn_down_sink_and_all() -> None:
    client = docker.from_env()
    early = HeadStart(observe=True, hostname="quiet-host")
    assert early.sink is not None
    sink = early.sink.result()
    session = client.api.inspect_container(sink.container_id)["Config"]["Labels"][labels.SESSION]
    assert [c["Id"] for c in labelled_containers(client, session)] == [sink.container_id]
    early.close()
    assert labelled_containers(client, session) == []


@pytest.mark.docker
def test_a_scan_takes_its_session_and_sink_and_its_teardown_removes_them() -> None:
    client = docker.from_env()
    policy = RunPolicy()
    early = HeadStart(observe=True, hostname=policy.hostname)
    assert early.sink is not None
    with early:
        report = run_scan(ScanOptions(target=str(ZOO), command="zoo-plain", policy=policy,
                                      timeouts=Timeouts(startup=60)), head_start=early)
        sink = early.sink.result()
    assert report.status == "complete" and report.tools and report.sandbox is not None and report.sandbox.teardown is not None and report.sandbox.teardown.complete
    assert sink.container_id[:12] in report.sandbox.teardown.removed  # the scan's teardown removed the head start's sink
    assert labelled_containers(client, report.sandbox.session) == []
    assert report.timings.engine_connect is not None and report.timings.sink_start is not None
