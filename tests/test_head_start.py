"""The engine work a package scan begins before the scan machinery is imported (scanner/pipeline/head_start.py):
what starts it and what does not (no Docker), and in a real engine that a scan takes its session and sink over, and
that one no scan took leaves nothing behind."""

from __future__ import annotations

from pathlib import Path
from types import SimpleNamespace

import docker
import pytest

from sandbox.run.observe import ObserveError
from sandbox.run.observer_watch import Watch
from sandbox.run.seeding import Seeded
from scanner.pipeline import head_start as head_start_module
from scanner.pipeline.head_start import HeadStart
from scanner.pipeline.inventory import Timeouts
from scanner.pipeline.scan import ScanOptions, run_scan
from scanner.probes import phase as probe_phase
from scanner.probes.options import ProbeOptions
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


def _zoo_options(command: str = "zoo-plain", **fields: object) -> ScanOptions:
    return ScanOptions(target=str(ZOO), command=command, policy=RunPolicy(), timeouts=Timeouts(startup=60),
                       **fields)  # type: ignore[arg-type]


@pytest.mark.docker
def test_a_cached_installs_server_starts_in_the_head_start_and_the_scan_lists_that_one() -> None:
    client = docker.from_env()
    options = _zoo_options()
    assert run_scan(options).status == "complete"  # now the install is cached
    with HeadStart(observe=True, hostname=options.policy.hostname, options=options) as early:
        assert early.server is not None
        begun = early.server.result()
        assert begun is not None and begun.started is not None and begun.second is not None
        first, second = begun.started.server.container_id, begun.second.server.container_id  # type: ignore[union-attr]
        assert client.api.inspect_container(first)["State"]["Running"]  # before run_scan was called
        report = run_scan(options, head_start=early)
    assert report.status == "complete" and report.tools and report.install is not None and report.install.cached
    assert [s.stage for s in report.skipped] == ["probes"] or "relisting" not in [s.stage for s in report.skipped]
    assert report.sandbox is not None and report.sandbox.teardown is not None and report.sandbox.teardown.complete
    assert first[:12] in report.sandbox.teardown.removed  # the scan's teardown removed the head start's server
    with pytest.raises(docker.errors.NotFound):
        client.api.inspect_container(second)  # P10 listed the second one and removed it
    assert report.timings.first_answer is not None and report.timings.install_lookup is not None
    # `total` counts from the head start, as the phases it ran do: never less than the server's wait for its answer
    assert report.timings.total is not None and report.timings.total >= report.timings.first_answer
    assert labelled_containers(client, report.sandbox.session) == []


@pytest.mark.docker
def test_a_begun_server_no_scan_took_is_torn_down_with_the_session() -> None:
    client = docker.from_env()
    options = _zoo_options()
    assert run_scan(options).status == "complete"
    early = HeadStart(observe=True, hostname=options.policy.hostname, options=options)
    assert early.server is not None and early.sink is not None
    begun = early.server.result()
    assert begun is not None and begun.started is not None
    session = client.api.inspect_container(begun.started.server.container_id)["Config"]["Labels"][labels.SESSION]
    assert len(labelled_containers(client, session)) == 3  # the sink and both servers
    seeded = begun.started.seeded  # seeded there too (probes on): its observer runs in the server's container
    assert seeded is not None and seeded.watch is not None and seeded.watch.observer is not None
    early.close()
    assert labelled_containers(client, session) == []
    assert seeded.watch.observer is None  # closed with the server no scan took


@pytest.mark.docker
def test_no_cache_begins_no_server() -> None:
    options = _zoo_options(use_cache=False)
    with HeadStart(observe=False, hostname=options.policy.hostname, options=options) as early:
        assert early.server is None and early.request is not None
        assert early.request.result().local_path is not None  # resolved there all the same


THREADS_IMPORT = """
import sys, threading
seen = []
class Watch:
    def find_spec(self, name, path=None, target=None):
        if name.split(".")[0] in ("scanner", "sandbox") and threading.current_thread().name.startswith(
                ("mcp-sandbox-head", "mcp-sandbox-seed")):
            seen.append((threading.current_thread().name, name))
        return None
sys.meta_path.insert(0, Watch())
from sandbox.run import attach, seeding, server
starts, events = [], []
original = server.start_created
def start_created(session, created):
    starts.append(threading.current_thread().name)
    return original(session, created)
server.start_created = start_created
original_seed, original_send = seeding.seed, attach.AttachedStdio.send
def seed(*args, **kwargs):
    done = original_seed(*args, **kwargs)
    events.append("SEEDED " + threading.current_thread().name)
    return done
async def send(self, data):
    events.append("SENT")
    await original_send(self, data)
seeding.seed, attach.AttachedStdio.send = seed, send
import atexit
atexit.register(lambda: print("IMPORTS", seen, "STARTS", starts, file=sys.stderr))
atexit.register(lambda: print("EVENTS", " ".join(event.split("_")[0] for event in events), file=sys.stderr))
sys.argv = ["mcp-sandbox", *sys.argv[1:]]
from scanner.cli.entry import main
main()
"""


@pytest.mark.docker
def test_the_cli_starts_a_cached_installs_servers_in_the_head_start_whose_threads_import_nothing_of_ours(
        tmp_path: Path) -> None:
    import subprocess
    import sys

    args = [sys.executable, "-c", THREADS_IMPORT, "scan", str(ZOO), "--command", "zoo-plain", "--no-probes", "-q",
            "--json", str(tmp_path / "r.json"), "--fail-on", "never"]
    subprocess.run(args, check=True, capture_output=True, cwd=Path(__file__).parent.parent)  # cached from here on
    done = subprocess.run(args, check=True, capture_output=True, text=True, cwd=Path(__file__).parent.parent)
    line = [text for text in done.stderr.splitlines() if text.startswith("IMPORTS")][-1]
    assert line.startswith("IMPORTS [] STARTS ['mcp-sandbox-head"), line  # the first server began in the head start
    assert line.count("mcp-sandbox-head") == 2, line  # and P10's second beside it


@pytest.mark.docker
def test_a_probing_scan_through_the_cli_seeds_its_server_in_the_head_start_before_sending_it_anything(
        tmp_path: Path) -> None:
    """The seeding (workspace, canaries, observer, baseline) runs in the head start's threads, which import nothing
    of ours, and ends before the first byte of the handshake is written to the server (the scan seeds no more)."""
    import subprocess
    import sys

    args = [sys.executable, "-c", THREADS_IMPORT, "scan", str(ZOO), "--command", "zoo-plain", "-q",
            "--json", str(tmp_path / "r.json"), "--fail-on", "never"]
    subprocess.run(args, check=True, capture_output=True, cwd=Path(__file__).parent.parent)  # cached from here on
    done = subprocess.run(args, check=True, capture_output=True, text=True, cwd=Path(__file__).parent.parent)
    imports = [text for text in done.stderr.splitlines() if text.startswith("IMPORTS")][-1]
    assert imports.startswith("IMPORTS [] STARTS ['mcp-sandbox-head"), imports
    events = [text for text in done.stderr.splitlines() if text.startswith("EVENTS")][-1].split()[1:]
    assert events[:2] == ["SEEDED", "mcp-sandbox-seed"] and events.count("SEEDED") == 1, events
    assert "SENT" in events  # the handshake and the probe calls, all after the seeding
    report = (tmp_path / "r.json").read_text()
    assert '"probes": [' in report and "probing skipped" not in report


@pytest.mark.docker
def test_a_probing_scan_takes_over_the_server_seeded_in_the_head_start_and_catches_a_canary_read(
        no_leftovers: None) -> None:
    options = _zoo_options(command="zoo-probe-exfil", probes=ProbeOptions(timeout=2.0))
    assert run_scan(options).status == "complete"  # now the install is cached
    with HeadStart(observe=True, hostname=options.policy.hostname, options=options) as early:
        assert early.server is not None
        begun = early.server.result()
        assert begun is not None and begun.started is not None and begun.started.seeded is not None
        watch, baseline = begun.started.seeded.result()  # seeded before run_scan was called
        assert "/home/mcp/.aws/credentials" in baseline.files and "/workspace/README.md" in baseline.files
        report = run_scan(options, head_start=early)
    assert report.timings.seed is not None and watch.finished  # the scan looked through that Watch, then ended it
    messages = [f.message for f in report.findings if f.rule_id == "B3" and f.tool == "sync_settings"]
    assert any("were read" in m and "~/.aws/credentials" in m for m in messages), messages
    assert any("appeared in network traffic" in m for m in messages), messages
    assert report.sandbox is not None and report.sandbox.teardown is not None and report.sandbox.teardown.complete


@pytest.mark.docker
def test_a_seeding_failure_in_the_head_start_skips_probing_with_the_seeding_error(
        monkeypatch: pytest.MonkeyPatch, no_leftovers: None) -> None:
    import threading

    options = _zoo_options(probes=ProbeOptions(timeout=2.0))
    assert run_scan(options).status == "complete"
    failed_in: list[str] = []

    def baseline_fails(self: Watch) -> object:
        failed_in.append(threading.current_thread().name)
        raise ObserveError("the snapshot exec could not start")

    monkeypatch.setattr(Watch, "snapshot", baseline_fails)  # the baseline look: the seeding's last step
    with HeadStart(observe=True, hostname=options.policy.hostname, options=options) as early:
        report = run_scan(options, head_start=early)
    assert len(failed_in) == 1 and failed_in[0].startswith("mcp-sandbox-"), failed_in  # not the main thread's
    assert report.tools and report.probes == [] and report.status == "incomplete"
    assert [(s.stage, s.reason) for s in report.skipped] == [
        ("probes", "probing skipped: could not seed the sandbox: the snapshot exec could not start")], report.skipped


def test_a_seeding_failure_handed_over_is_the_probe_phases_without_seeding_again() -> None:
    plan = probe_phase.prepare(ProbeOptions(), RunPolicy())
    no_engine = SimpleNamespace(client=None)  # nothing may be asked of an engine: the seeding was done
    hook, holder = probe_phase.make_after_listing(
        no_engine, None, plan, lambda: None,  # type: ignore[arg-type]
        seeded=Seeded(failure=ObserveError("tar -x into /workspace exited with 2")))
    assert hook is None and holder.errors == [
        "probing skipped: could not seed the sandbox: tar -x into /workspace exited with 2"]


@pytest.mark.docker
def test_the_workspace_seed_is_built_while_the_server_is_created_with_the_canaries_variables(
        monkeypatch: pytest.MonkeyPatch, no_leftovers: None) -> None:
    """Creating the server needs only the canaries' variables: the workspace seed (git, a tar) is built beside it,
    and the plan the scan takes over is complete (the seed made, the canaries in the policy)."""
    import threading

    from sandbox.run import server as run_server
    from scanner.probes import run_plan

    options = _zoo_options()
    assert run_scan(options).status == "complete"
    created, built_in = threading.Event(), []
    create, build = run_server.create_server, run_plan.build_workspace_seed

    def create_server(*args: object, **kwargs: object) -> object:
        created.set()
        return create(*args, **kwargs)  # type: ignore[arg-type]

    def build_workspace_seed(uid: int, gid: int) -> object:
        built_in.append((threading.current_thread().name, created.wait(timeout=20)))  # one after the other: never
        return build(uid, gid)

    monkeypatch.setattr(run_server, "create_server", create_server)
    monkeypatch.setattr(run_plan, "build_workspace_seed", build_workspace_seed)
    with HeadStart(observe=True, hostname=options.policy.hostname, options=options) as early:
        assert early.server is not None
        begun = early.server.result()
        assert begun is not None and begun.started is not None
        plan = begun.started.plan
        assert plan.seed is not None and plan.workspace is not None and plan.canaries is not None
        assert set(plan.canaries.env) <= set(plan.policy.env) and plan.policy.network_mode.startswith("container:")
        report = run_scan(options, head_start=early)
    assert len(built_in) == 1 and built_in[0][0].startswith("mcp-sandbox-seed") and built_in[0][1], built_in
    assert report.status == "complete" and report.probes and report.timings.probe_plan is not None, (
        report.status, report.skipped, report.errors)


@pytest.mark.docker
def test_a_sigterm_as_the_head_start_creates_its_first_container_tears_its_session_down(tmp_path: Path,
                                                                                      docker_client) -> None:
    """The signals are caught before the head start begins: a SIGTERM as soon as its first container (the sink)
    exists, while it still imports the server's start code or the CLI imports the scan path, ends the scan with exit
    130 and nothing of its session left (before, a SIGTERM there ended the process at once, its containers left for
    a later gc)."""
    import signal
    import subprocess
    import sys
    import time

    args = [sys.executable, "-m", "scanner", "scan", str(ZOO), "--command", "zoo-plain", "--no-probes", "-q",
            "--json", str(tmp_path / "r.json"), "--fail-on", "never"]
    subprocess.run(args, check=True, capture_output=True, cwd=Path(__file__).parent.parent)  # cached from here on
    scan = subprocess.Popen(args, cwd=Path(__file__).parent.parent, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    deadline = time.monotonic() + 60
    while not [c for c in labelled_containers(docker_client) if c["Labels"].get(labels.OWNER_PID) == str(scan.pid)]:
        assert scan.poll() is None and time.monotonic() < deadline, "the scan created no container"
        time.sleep(0.005)
    scan.send_signal(signal.SIGTERM)
    _, stderr = scan.communicate(timeout=120)
    assert scan.returncode == 130, stderr.decode(errors="replace")[-800:]
    left = [c["Id"][:12] for c in labelled_containers(docker_client) if c["Labels"].get(labels.OWNER_PID) == str(scan.pid)]
    assert left == []
