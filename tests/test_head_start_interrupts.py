"""Ctrl-C while the head start's slow work runs (scanner/pipeline/head_start.py `_in_background`): a registry that
accepts the connection and never answers (the client's read timeout is 30 s), a first run's build of the sink's
image. Each runs in a daemon thread that closing the head start (or halting the scan that took it) gives up, so
the interrupt ends the scan at once, its sandbox torn down, as it did when the scan did this work in its main thread
(before, the interrupt waited for the work to end, every signal held)."""

from __future__ import annotations

import os
import signal
import socket
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest

from sandbox.core import images, labels
from scanner.pipeline import head_start as head_start_module
from scanner.pipeline.head_start import HeadStart
from scanner.pipeline.scan import run_scan
from scanner.pipeline.scan_options import ScanOptions
from scanner.pipeline.timeouts import Timeouts
from scanner.probes.options import ProbeOptions
from sandbox.run.policy import RunPolicy
from tests.sandbox_helpers import ZOO, labelled_containers
from tests.silent_listener import never_answering

REPO = Path(__file__).resolve().parent.parent
PROMPT = 12.0  # seconds from the interrupt to the exit: well under the 30 s the slow work is made to take


@pytest.fixture
def silent_registry() -> Iterator[tuple[str, threading.Event]]:
    """The URL of an HTTP listener that accepts every connection and never answers, and an event set at its first
    connection (the resolution is under way)."""
    server = socket.socket()
    server.bind(("127.0.0.1", 0))
    server.listen(64)
    with never_answering(server) as asked:
        yield f"http://127.0.0.1:{server.getsockname()[1]}/pypi", asked


def _left(docker_client: object, pid: int) -> list[str]:
    return [c["Id"][:12] for c in labelled_containers(docker_client)  # type: ignore[arg-type]
            if c["Labels"].get(labels.OWNER_PID) == str(pid)]


def _interrupted(scan: subprocess.Popen[str]) -> tuple[float, str]:
    """SIGINT now: the seconds until the scan exited, and its stderr."""
    scan.send_signal(signal.SIGINT)
    sent = time.monotonic()
    _, err = scan.communicate(timeout=120)
    return time.monotonic() - sent, err


@pytest.mark.docker
def test_ctrl_c_while_the_registry_never_answers_ends_the_scan_at_once(
        silent_registry: tuple[str, threading.Event], tmp_path: Path, docker_client: object) -> None:
    url, asked = silent_registry
    env = {**os.environ, "MCP_SANDBOX_PYPI_JSON": url, "PYTHONPATH": str(REPO)}
    scan = subprocess.Popen([sys.executable, "-m", "scanner", "scan", "pypi:mcp-server-time", "--no-probes", "-q",
                             "--json", str(tmp_path / "r.json")], cwd=REPO, env=env, text=True,
                            stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    assert asked.wait(60), "the scan never asked the registry"
    time.sleep(0.5)  # past the head start's beginning: the scan waits for the resolution or imports its code
    waited, err = _interrupted(scan)
    assert scan.returncode == 130 and err.strip().splitlines() == ["interrupted; the sandbox was torn down"], err
    assert waited < PROMPT, f"the interrupt waited {waited:.1f} s for the registry"
    assert _left(docker_client, scan.pid) == []


SLOW_SINK_BUILD = """
import pathlib, sys, time
from sandbox.core import images
from sandbox.core.errors import ImageMissing
from scanner.pipeline import head_start
marks = pathlib.Path(sys.argv[1])
original = images.ensure_runtime_image
def ensure(client, runtime, **kwargs):
    if runtime != "sink":
        return original(client, runtime, **kwargs)
    if not kwargs.get("build", True):
        raise ImageMissing("the sink image is not built (as this test has it)")
    (marks / "building").touch()
    time.sleep(30)  # a first run's build of the sink's image
    return original(client, runtime, **kwargs)
images.ensure_runtime_image = ensure
take = head_start.HeadStart.take
def taken(self):
    session = take(self)
    (marks / "taken").touch()
    return session
head_start.HeadStart.take = taken
sys.argv = ["mcp-sandbox", *sys.argv[2:]]
from scanner.cli.entry import main
main()
"""


@pytest.mark.docker
@pytest.mark.parametrize("mark", ["building", "taken"])
def test_ctrl_c_while_the_sinks_image_is_built_ends_the_scan_at_once(mark: str, tmp_path: Path,
                                                                     docker_client: object) -> None:
    """The sink's image missing, the scan's own head start builds it (simulated: 30 s); Ctrl-C as the build begins
    (the CLI still imports the scan path) or once the scan took the session (its install stage waits for the
    server begun beside the sink) ends the scan at once, nothing left."""
    args = [str(ZOO), "--command", "zoo-plain", "--no-probes", "-q", "--json", str(tmp_path / "r.json"),
            "--fail-on", "never"]
    subprocess.run([sys.executable, "-m", "scanner", "scan", *args], check=True, capture_output=True,
                   cwd=REPO)  # the install cached: the server waits for the sink in the head start
    scan = subprocess.Popen([sys.executable, "-c", SLOW_SINK_BUILD, str(tmp_path), "scan", *args], cwd=REPO,
                            text=True, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    deadline = time.monotonic() + 60
    while not (tmp_path / mark).exists():
        assert scan.poll() is None and time.monotonic() < deadline, f"never {mark}"
        time.sleep(0.01)
    waited, err = _interrupted(scan)
    assert scan.returncode == 130 and err.strip().splitlines() == ["interrupted; the sandbox was torn down"], err
    assert waited < PROMPT, f"the interrupt waited {waited:.1f} s for the sink's build"
    assert _left(docker_client, scan.pid) == []


@pytest.mark.docker
def test_the_sinks_image_build_in_the_head_start_says_its_steps_on_the_scans_progress(
        monkeypatch: pytest.MonkeyPatch, no_leftovers: None) -> None:
    """A first run's build of the sink's image runs in the head start, before the spinner shows; its steps from
    then on are the scan's progress (before, nothing: the spinner said no build step)."""
    original = images.ensure_runtime_image
    seen = threading.Event()

    def ensure(client: object, runtime: str, **kwargs: object) -> images.RuntimeImage:
        progress = kwargs.get("progress")
        if runtime == "sink" and kwargs.get("build", True):
            deadline = time.monotonic() + 10  # a build saying its steps until the scan shows one
            while not seen.is_set() and time.monotonic() < deadline:
                if callable(progress):
                    progress("Step 2/5 : RUN make")
                time.sleep(0.05)
        return original(client, runtime, **kwargs)  # type: ignore[arg-type]

    def progress(step: str) -> None:
        if "sink's image" in step:
            steps.append(step)
            seen.set()
    steps: list[str] = []
    monkeypatch.setattr(images, "ensure_runtime_image", ensure)
    options = ScanOptions(target=str(ZOO), command="zoo-plain", policy=RunPolicy(), timeouts=Timeouts(startup=60),
                          probes=ProbeOptions(enabled=False))
    with HeadStart(observe=True, hostname=options.policy.hostname, options=options) as early:
        report = run_scan(options, progress, head_start=early)
    assert report.status == "complete" and report.tools
    assert steps and steps[0] == "building the egress sink's image: Step 2/5 : RUN make", steps


def test_a_registry_client_made_after_the_head_start_closed_is_closed_by_its_thread(
        monkeypatch: pytest.MonkeyPatch) -> None:
    """Closing waits for neither the registry client nor the resolution; a client made after that is closed (no
    engine is asked anything: the network is off and the engine never answers here)."""
    made = threading.Event()
    release = threading.Event()
    clients: list[httpx.Client] = []

    def client(self: object, **_: object) -> httpx.Client:
        release.wait(30)
        clients.append(httpx.Client())
        made.set()
        return clients[-1]

    def connect(self: HeadStart) -> object:
        release.wait(30)
        raise head_start_module.SandboxError("no engine here")
    from scanner.registry.endpoints import RegistryEndpoints

    monkeypatch.setattr(RegistryEndpoints, "client", client)
    monkeypatch.setattr(HeadStart, "_connect", connect)
    early = HeadStart(observe=False, hostname="quiet-host", options=ScanOptions(target="pypi:mcp-server-time"))
    began = time.monotonic()
    early.close()
    assert time.monotonic() - began < 5
    release.set()
    assert made.wait(10)
    deadline = time.monotonic() + 10
    while not clients[0].is_closed and time.monotonic() < deadline:
        time.sleep(0.01)
    assert clients[0].is_closed
