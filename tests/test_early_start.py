"""A package scan's sink begun before the CLI reads its flags (scanner/cli/early_start.py): which command lines begin
it (no Docker), how the scan adopts or closes it (no Docker: a stand-in records what it is asked), and through the
console entry on a real engine that a scan adopts the one begun before typer was imported, that a bad flag or a
SIGTERM while the CLI imports leaves nothing behind."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from contextlib import nullcontext
from pathlib import Path
from typing import Any

import docker
import pytest

from sandbox.core.errors import ImageMissing
from sandbox.run.policy import RunPolicy
from scanner.cli import app, early_start, scan_door
from scanner.cli.early_start import looks_like_package_scan
from scanner.pipeline import head_start as head_start_module
from scanner.pipeline.head_start import HeadStart
from scanner.pipeline.scan_options import ScanOptions
from tests.sandbox_helpers import ZOO, labelled_containers, left_behind

REPO = Path(__file__).resolve().parent.parent


@pytest.mark.parametrize("argv", [
    ["scan", "pypi:mcp-server-time"],
    ["scan", "npm:@modelcontextprotocol/server-filesystem", "--", "/workspace"],
    ["scan", "-q", "--json", "r.json", "--no-probes", "./server"],
    ["scan", "--", "npx", "-y", "pkg", "--help", "--url", "x"],  # after --: the server's words, not read
    ["scan", "--network", "observe", "pypi:x"],
    ["scan", "--network=observe", "pypi:x"],
    ["scan", "pypi:x", "--json", "-", "-q"],  # `-` alone is a value (stdout), not a flag
])
def test_a_package_scan_looks_like_one(argv: list[str]) -> None:
    assert looks_like_package_scan(argv)


@pytest.mark.parametrize("argv", [
    [],
    ["check", "tools.json"],
    ["--version"],
    ["scan"],  # nothing to scan
    ["scan", "-q", "--no-probes"],
    ["scan", "--help"],
    ["scan", "pypi:x", "-h"],
    ["scan", "-qh", "pypi:x"],
    ["scan", "--network", "none", "pypi:x"],
    ["scan", "--network=none", "pypi:x"],
    ["scan", "pypi:x", "--network"],
    ["scan", "docker:alpine:3"],
    ["scan", "--url", "http://127.0.0.1:9/mcp"],
    ["scan", "--header", "A: b", "pypi:x"],
    ["scan", "--config-file", "mcp.json"],
    ["scan", "--config-file=mcp.json", "--server", "one"],
    ["scan", "--pass-config-env", "pypi:x"],
    ["scan", "--header-env", "A=B", "pypi:x"],
    ["scan", "--allow-writes", "pypi:x"],
    ["scan", "--server", "one", "pypi:x"],
    ["scan", "--network", "observe", "--network", "none", "pypi:x"],  # the last one given wins
    ["scan", "--"],  # a launch command of no words
    ["scan", "pypi:x", "--jsno", "r.json"],  # a flag scan does not take: the usage error comes at once
    ["scan", "pypi:x", "--json=r.json", "--no-prober"],
    ["scan", "-x", "pypi:x"],
])
def test_the_near_misses_begin_nothing(argv: list[str]) -> None:
    assert not looks_like_package_scan(argv)


def test_the_flags_it_knows_are_the_flags_scan_takes() -> None:
    import typer.main

    from scanner.cli.app import app as cli

    scan = typer.main.get_command(cli).get_command(None, "scan")  # type: ignore[attr-defined]
    flags = {opt for param in scan.params for opt in (*param.opts, *param.secondary_opts) if opt.startswith("-")}
    assert {flag for flag in flags if flag.startswith("--")} == early_start.SCAN_FLAGS
    assert {flag[1:] for flag in flags if not flag.startswith("--")} == set(early_start.SHORT_FLAGS)


class Speculative:
    """Stands in for a head start begun before the flags were read: records what the scan asks of it."""

    def __init__(self, *, fitting: bool, hostname: str = "early-host") -> None:
        self.hostname, self.fitting = hostname, fitting
        self.begun: list[ScanOptions] = []
        self.closed = 0

    def fits(self, options: ScanOptions) -> bool:
        return self.fitting and options.policy.hostname == self.hostname

    def begin(self, options: ScanOptions) -> None:
        self.begun.append(options)

    def close(self, *, ending: bool = False) -> None:
        self.closed += 1


class Adopted(Exception):
    """Raised by the stand-in's begin in the CLI tests: the scan went no further than adopting it."""


def test_a_fitting_one_is_adopted_and_begun_with_the_scans_options(monkeypatch: pytest.MonkeyPatch) -> None:
    made: list[dict[str, Any]] = []
    monkeypatch.setattr(head_start_module, "HeadStart", lambda **kwargs: made.append(kwargs))
    early = Speculative(fitting=True)
    planned = ScanOptions(target="pypi:x", policy=RunPolicy(hostname="early-host"))
    assert scan_door.head_start(planned, early) is early  # type: ignore[arg-type]
    assert early.begun == [planned] and early.closed == 0 and made == []


def test_one_that_does_not_fit_is_closed_and_a_head_start_of_the_scans_own_is_begun(
        monkeypatch: pytest.MonkeyPatch) -> None:
    made: list[dict[str, Any]] = []
    monkeypatch.setattr(head_start_module, "HeadStart", lambda **kwargs: made.append(kwargs) or nullcontext())
    early = Speculative(fitting=False)
    planned = ScanOptions(target="pypi:x", network="none", policy=RunPolicy(hostname="early-host"))
    scan_door.head_start(planned, early)  # type: ignore[arg-type]
    assert early.begun == [] and early.closed == 1
    assert [(kwargs["observe"], kwargs["options"]) for kwargs in made] == [(False, planned)]


def test_one_for_a_scan_that_begins_nothing_is_closed() -> None:
    early = Speculative(fitting=True)
    assert isinstance(scan_door.head_start(None, early), nullcontext)  # type: ignore[arg-type]
    assert early.begun == [] and early.closed == 1


def test_the_cli_adopts_it_with_the_run_policy_taking_its_host_name(monkeypatch: pytest.MonkeyPatch,
                                                                     capsys: pytest.CaptureFixture[str],
                                                                     tmp_path: Path) -> None:
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("DOCKER_HOST", f"unix://{tmp_path}/no-engine.sock")
    early = Speculative(fitting=True, hostname="early-host")

    def begin(options: ScanOptions) -> None:
        early.begun.append(options)
        raise Adopted

    early.begin = begin  # type: ignore[method-assign]
    monkeypatch.delenv("MCP_SANDBOX_DEBUG", raising=False)  # the stand-in's exception is reported, not re-raised
    monkeypatch.setattr(sys, "argv", ["mcp-sandbox", "scan", "-q", "npm:x@1.0.0"])
    with pytest.raises(SystemExit):
        app.main(early)  # type: ignore[arg-type]
    assert [(options.target, options.policy.hostname) for options in early.begun] == [("npm:x@1.0.0", "early-host")]
    assert "Adopted" in capsys.readouterr().err  # the stand-in ended the scan there


def test_the_cli_closes_one_a_refused_scan_does_not_take(monkeypatch: pytest.MonkeyPatch,
                                                          capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    monkeypatch.chdir(tmp_path)
    early = Speculative(fitting=True)
    monkeypatch.setattr(sys, "argv", ["mcp-sandbox", "scan", "-q", "npm:postmark-mcp@1.0.16"])  # known bad
    with pytest.raises(SystemExit) as with_one:
        app.main(early)  # type: ignore[arg-type]
    assert early.begun == [] and early.closed == 1
    said = capsys.readouterr().err
    with pytest.raises(SystemExit) as without:
        app.main()
    assert (with_one.value.code, said) == (without.value.code, capsys.readouterr().err) == (1, said)  # as without


def test_a_head_start_fits_only_its_own_sink_and_begins_one_server(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("DOCKER_HOST", f"unix://{tmp_path}/no-engine.sock")  # its threads fail at once
    with HeadStart(observe=True, hostname="early-host") as early:
        policy = RunPolicy(hostname="early-host")
        assert early.fits(ScanOptions(target="pypi:x", policy=policy))
        assert not early.fits(ScanOptions(target="pypi:x", policy=RunPolicy(hostname="other-host")))
        assert not early.fits(ScanOptions(target="pypi:x", network="none", policy=policy))
        early.begin(ScanOptions(target=str(tmp_path), policy=policy, use_cache=False))  # no package: fails there
        with pytest.raises(ValueError):
            early.begin(ScanOptions(target=str(tmp_path), policy=policy))  # once


# The console entry with its head start recorded: whether typer was imported when it began, the sinks created, how
# often it was closed; printed at exit. `AT_IMPORT=name`: the CLI is imported only once the head start's sink was
# created (if one was begun), and when module `name` is first imported the run sends itself `SEND` (TERM or INT;
# nothing when unset). The wait is not in the finder: CPython asks finders holding the global import lock, which a
# head start thread importing anything would then wait on.
HARNESS = """
import json, os, signal, sys, time
from scanner.pipeline import head_start
from sandbox.run import sink
record = {"began_before_typer": [], "sinks": [], "closed": 0}
made = []
original_init, original_close, original_create = head_start.HeadStart.__init__, head_start.HeadStart.close, sink.create_sink
def init(self, **kwargs):
    record["began_before_typer"].append("typer" not in sys.modules)
    made.append(self)
    original_init(self, **kwargs)
def close(self, **kwargs):
    record["closed"] += 1
    original_close(self, **kwargs)
def create_sink(*args, **kwargs):
    created = original_create(*args, **kwargs)
    record["sinks"].append(created.container_id)
    return created
head_start.HeadStart.__init__, head_start.HeadStart.close = init, close
head_start.create_sink = create_sink
from scanner.cli import entry
original_run_app = entry._run_app
def run_app(early):
    if os.environ.get("AT_IMPORT") and made and made[0]._sink_created is not None:
        made[0]._sink_created.exception(timeout=60)
    original_run_app(early)
entry._run_app = run_app
class AtImport:
    def find_spec(self, name, path=None, target=None):
        if name == os.environ.get("AT_IMPORT"):
            os.environ.pop("AT_IMPORT")
            if os.environ.get("SEND"):
                os.kill(os.getpid(), getattr(signal, "SIG" + os.environ["SEND"]))
                time.sleep(5)
        return None
sys.meta_path.insert(0, AtImport())
import atexit
atexit.register(lambda: print("RECORD " + json.dumps(record), file=sys.stderr))
sys.argv = ["mcp-sandbox", *sys.argv[1:]]
entry.main()
"""


def _through_the_entry(*args: str, env: dict[str, str] | None = None) -> tuple[subprocess.CompletedProcess[str],
                                                                                 dict[str, Any], list[str]]:
    """The run, its record, and its stderr's other lines."""
    done = subprocess.run([sys.executable, "-c", HARNESS, *args], capture_output=True, text=True, cwd=REPO,
                          timeout=300, env={**os.environ, **(env or {})})
    lines = done.stderr.splitlines()
    record = [text for text in lines if text.startswith("RECORD ")][-1]
    return done, json.loads(record[len("RECORD "):]), [text for text in lines if not text.startswith("RECORD ")]


def _zoo_scan(tmp_path: Path, *flags: str) -> list[str]:
    return ["scan", str(ZOO), "--command", "zoo-plain", "--no-probes", "-q", "--json", str(tmp_path / "r.json"),
            "--fail-on", "never", *flags]


@pytest.mark.docker
def test_a_scan_through_the_entry_adopts_the_sink_begun_before_typer_was_imported(tmp_path: Path) -> None:
    subprocess.run([sys.executable, "-m", "scanner", *_zoo_scan(tmp_path)], check=True, capture_output=True,
                   cwd=REPO)  # cached from here on
    done, record, said = _through_the_entry(*_zoo_scan(tmp_path))
    assert done.returncode == 0 and said == [], said
    assert record["began_before_typer"] == [True] and len(record["sinks"]) == 1, record  # one head start, adopted
    report = json.loads((tmp_path / "r.json").read_text())
    assert report["status"] == "complete" and report["tools"]
    assert record["sinks"][0][:12] in report["sandbox"]["teardown"]["removed"]  # the scan's own sink
    assert labelled_containers(docker.from_env(), report["sandbox"]["session"]) == []


@pytest.mark.docker
def test_a_bad_flag_after_the_sink_began_exits_2_with_one_line_and_leaves_nothing(tmp_path: Path) -> None:
    client = docker.from_env()
    before = {c["Id"] for c in labelled_containers(client)}
    done, record, said = _through_the_entry(*_zoo_scan(tmp_path, "--memory", "1k"), env={"AT_IMPORT": "typer"})
    assert done.returncode == 2
    assert said == ["error: --memory '1k' is under 32m; no server starts in that"]
    assert record["began_before_typer"] == [True] and len(record["sinks"]) == 1, record  # a sink was made
    assert left_behind(client, before) == set()  # and removed


def test_help_begins_nothing(tmp_path: Path) -> None:
    done, record, _ = _through_the_entry(*_zoo_scan(tmp_path, "--help"))
    assert done.returncode == 0 and "Usage" in done.stdout
    assert record == {"began_before_typer": [], "sinks": [], "closed": 0}


def test_an_interrupt_once_it_began_with_no_engine_says_interrupted_in_one_line(tmp_path: Path) -> None:
    done, record, said = _through_the_entry(*_zoo_scan(tmp_path), env={
        "AT_IMPORT": "typer", "SEND": "INT", "DOCKER_HOST": f"unix://{tmp_path}/no-engine.sock"})
    assert (done.returncode, said) == (130, ["interrupted"])  # no sandbox was made, so none is said torn down
    assert record["sinks"] == [] and record["began_before_typer"] == [True]


@pytest.mark.docker
@pytest.mark.parametrize(("module", "send"), [("typer", "TERM"), ("typer", "INT"), ("scanner.cli.scan", "INT"),
                                              ("scanner.config", "TERM")])
def test_a_signal_before_the_scan_adopts_its_sink_tears_it_down_and_says_so(tmp_path: Path, module: str,
                                                                            send: str) -> None:
    """While the CLI imports (typer), while it builds the scan command (scanner.cli.scan) or reads its config: the
    last two inside the command, where typer ends an interrupt without a word."""
    client = docker.from_env()
    before = {c["Id"] for c in labelled_containers(client)}
    done, record, said = _through_the_entry(*_zoo_scan(tmp_path), env={"AT_IMPORT": module, "SEND": send})
    assert (done.returncode, said) == (130, ["interrupted; the sandbox was torn down"]), done.stderr[-800:]
    assert len(record["sinks"]) == 1 and record["closed"] >= 1
    assert left_behind(client, before) == set()


@pytest.mark.docker
def test_a_sink_whose_image_is_not_built_does_not_fit_and_is_not_built(monkeypatch: pytest.MonkeyPatch) -> None:
    """A head start begun before the flags were read builds no image: it does not fit, and the scan's own builds.
    (A base image of no such name stands for an image not built yet.)"""
    original = head_start_module.create_sink

    def create_sink(session: Any, **kwargs: Any) -> Any:
        return original(session, base_image="mcp-sandbox-no-such-base:0", **kwargs)

    options = ScanOptions(target="pypi:x", policy=RunPolicy(hostname="early-host"))
    monkeypatch.setattr(head_start_module, "create_sink", create_sink)
    with HeadStart(observe=True, hostname="early-host", build_images=False) as unbuilt:
        assert not unbuilt.fits(options)
        assert unbuilt.sink is not None and isinstance(unbuilt.sink.exception(), ImageMissing)
    monkeypatch.setattr(head_start_module, "create_sink", original)
    with HeadStart(observe=True, hostname="early-host", build_images=False) as built:
        assert built.fits(options)  # the near miss: its image is there


class Closed:
    """Stands in for a head start no scan adopted, closed by now: what its teardown left."""

    def __init__(self, left: list[str] | None, *, connected: bool = True) -> None:
        self.left, self.connected, self.begun = left, connected, False

    def left_behind(self) -> list[str] | None:
        return self.left

    interrupted_line = HeadStart.interrupted_line  # the real line, from what this one says was left


@pytest.mark.parametrize(("closed", "interrupted", "said"), [
    (Closed(["c1 (the engine refused to remove it: \x1b[2Jbusy)"]), False,
     "warning: the sandbox begun for this scan was not fully torn down: left c1 (the engine refused to remove it: "
     "\\e[2Jbusy); `mcp-sandbox gc` removes what is left\n"),  # the engine's words shown, not obeyed
    (Closed(None), False, "warning: the sandbox begun for this scan was not fully torn down: its teardown failed; "
                          "`mcp-sandbox gc` removes what is left\n"),
    (Closed([]), False, ""),  # the near miss: nothing left, nothing said
    (Closed(["c1"], connected=False), False, ""),  # no engine: nothing was made
    (Closed([]), True, "interrupted; the sandbox was torn down\n"),
    (Closed([], connected=False), True, "interrupted\n"),
])
def test_after_a_command_that_did_not_adopt_it_a_line_only_for_what_was_left_or_an_interrupt(
        capsys: pytest.CaptureFixture[str], closed: Closed, interrupted: bool, said: str) -> None:
    from scanner.cli.early_start import _say_after

    _say_after(closed, interrupted=interrupted)  # type: ignore[arg-type]
    assert capsys.readouterr().err == said
