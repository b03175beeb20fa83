"""Where a fresh install's time goes: the install times its own phases (sandbox/install/container.py), and the scan
puts them in the report's timings as install_proxy, install_container, … (scanner/pipeline/installation.py).
The real install's phases are checked in tests/test_install_egress.py and a real cold scan's report in
tests/test_upstream_proxy.py; these are the pure parts."""

from __future__ import annotations

import time
from types import SimpleNamespace
from typing import Any

import pytest
from docker.errors import APIError

from sandbox.core import images
from sandbox.install import container
from sandbox.install.request import INSTALL_PHASES, InstalledServer, InstallPhase, InstallRequest
from scanner.pipeline import installation
from scanner.pipeline.phase_clock import PhaseClock
from scanner.report.model import Timings


def test_a_timed_call_adds_its_seconds_to_its_phase_and_returns_its_value() -> None:
    phases: dict[InstallPhase, float] = {}
    assert container._timed(phases, "proxy", time.sleep, 0.02) is None
    assert container._timed(phases, "proxy", lambda value: value, 7) == 7
    assert container._timed(phases, "commit", lambda: "image") == "image"
    assert phases["proxy"] >= 0.02 and set(phases) == {"proxy", "commit"}


def test_a_timed_call_that_raises_is_timed_too() -> None:
    phases: dict[InstallPhase, float] = {}

    def failing() -> None:
        time.sleep(0.01)
        raise RuntimeError("the engine went away")
    with pytest.raises(RuntimeError):
        container._timed(phases, "steps", failing)
    assert phases["steps"] >= 0.01


def _installed(phases: dict[InstallPhase, float], *, cached: bool) -> InstalledServer:
    return InstalledServer(image="mcp-sandbox-installed:x", image_id="sha256:x", runtime_image="runtime",
                           cached=cached, name="pkg", version="1.0", entry_points={}, installer_output="",
                           seconds=sum(phases.values()), manifest={}, phases=phases)


@pytest.mark.parametrize("cached", [False, True])
def test_the_scan_times_a_fresh_installs_phases_and_a_cached_one_adds_none(monkeypatch: pytest.MonkeyPatch,
                                                                          cached: bool) -> None:
    given: dict[InstallPhase, float] = {} if cached else {
        "proxy": 0.4, "container": 0.3, "steps": 2.5, "finish": 0.2, "commit": 1.4}

    def fake_install(*_args: Any, phases: dict[InstallPhase, float], **_kwargs: Any) -> InstalledServer:
        phases.update(given)  # the install fills the caller's phases as it goes (a cached one adds none)
        return _installed(dict(given), cached=cached)

    monkeypatch.setattr(installation.install, "install", fake_install)
    clock = PhaseClock()
    runtime = images.RuntimeImage(runtime="python", tag="runtime", image_id="sha256:r", built=False)
    request = SimpleNamespace(spec="pkg==1.0")
    installation.install_server(object(), request, runtime, use_cache=True,  # type: ignore[arg-type]
                                progress=lambda _message: None, clock=clock)
    timings = Timings(**clock.seconds())
    fields = [getattr(timings, f"install_{phase}") for phase in INSTALL_PHASES]
    assert fields == ([None] * 5 if cached else [0.4, 0.3, 2.5, 0.2, 1.4])


def test_every_install_phase_has_its_timings_field() -> None:
    described: dict[str, Any] = Timings.model_json_schema()["properties"]
    for phase in INSTALL_PHASES:
        assert f"install_{phase}" in described and installation.TIMED_AS[phase] == f"install_{phase}"


def test_a_failed_installs_parts_reach_the_report_timings(monkeypatch: pytest.MonkeyPatch) -> None:
    """An engine error mid-install (here the commit's) ends the scan with a partial report (scan.in_session): the
    parts the install timed before it raised are in the clock that report's timings come from, not lost with the
    result."""
    def failing_install(*_args: Any, phases: dict[InstallPhase, float], **_kwargs: Any) -> InstalledServer:
        phases.update({"proxy": 0.4, "container": 0.3, "steps": 2.5, "finish": 0.2})
        raise APIError("commit: no space left on device")

    monkeypatch.setattr(installation.install, "install", failing_install)
    clock = PhaseClock()
    runtime = images.RuntimeImage(runtime="python", tag="runtime", image_id="sha256:r", built=False)
    with pytest.raises(APIError):
        installation.install_server(object(), SimpleNamespace(spec="pkg==1.0"), runtime,  # type: ignore[arg-type]
                                    use_cache=False, progress=lambda _message: None, clock=clock)
    timings = Timings(**clock.seconds())
    assert [getattr(timings, f"install_{phase}") for phase in INSTALL_PHASES] == [0.4, 0.3, 2.5, 0.2, None]


def test_the_install_fills_the_callers_phases_before_it_raises(monkeypatch: pytest.MonkeyPatch) -> None:
    """container.install itself: the phases it timed before a failure stay in the caller's dict."""
    proxy = SimpleNamespace(wait_ready=lambda: None)

    def failing_start(*_args: Any) -> None:
        raise APIError("the install container did not start")

    monkeypatch.setattr(container, "launch_install_proxy", lambda *_a, **_k: proxy)
    monkeypatch.setattr(container, "install_network_settings", lambda _proxy: {"environment": {}})
    monkeypatch.setattr(container, "_create_install_container", lambda *_a: "c")
    monkeypatch.setattr(container, "_started_runner", failing_start)
    monkeypatch.setattr(container, "_stop", lambda *_a: None)
    monkeypatch.setattr(container, "_settled_attempts", lambda *_a: [])
    monkeypatch.setattr(container, "_remove_install", lambda *_a: None)
    session = SimpleNamespace(client=SimpleNamespace(api=None))
    phases: dict[InstallPhase, float] = {}
    with pytest.raises(APIError, match="did not start"):
        container.install(session, InstallRequest("pypi", "pkg==1.0", "pkg", "pkg==1.0"),  # type: ignore[arg-type]
                          "runtime", "sha256:r", use_cache=False, phases=phases)
    assert set(phases) == {"proxy", "container"}
