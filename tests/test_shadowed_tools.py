"""The sandbox's own looks into the run container (the observer's `python3`, the snapshot and namespace `sh`, the
seeding `tar`) must run the runtime image's tools, never the package's: the server's PATH puts
/opt/server/node_modules/.bin and the venv's bin first, and a package may install bins named `python3`, `sh`, `find`
or `tar` there. An exec inherits the container's PATH, so before the fix each look ran the package's code (as the
observer's own group, for `python3`) and a scan of tests/servers/npm-shadow-tools passed clean. The same for the
start gate's own tools (sandbox/run/start_gate.py): its script ran the package's `mkfifo` before the seeding, by the
server's PATH."""

from __future__ import annotations

from pathlib import Path

import pytest

from sandbox.run.exec_stream import EXEC_ENVIRONMENT
from sandbox.run.policy import SERVER_PATH, RunPolicy
from scanner.pipeline.inventory import Timeouts
from scanner.pipeline.scan import ScanOptions, run_scan

SHADOW = Path(__file__).resolve().parent / "servers" / "npm-shadow-tools"


def test_the_looks_path_holds_no_folder_the_install_writes():
    path = dict(entry.split("=", 1) for entry in EXEC_ENVIRONMENT)["PATH"].split(":")
    assert path and not any(folder.startswith("/opt/") for folder in path)
    assert set(path) < set(SERVER_PATH.split(":"))


@pytest.mark.docker
def test_a_package_bin_named_after_a_sandbox_tool_never_runs_in_its_place(tmp_path, no_leftovers):
    target = tmp_path / SHADOW.name
    target.mkdir()
    for file in SHADOW.iterdir():
        (target / file.name).write_bytes(file.read_bytes())
        (target / file.name).chmod(file.stat().st_mode)
    # a variable dash would drop: the gate then launches the server through env (sandbox/run/start_gate.py)
    report = run_scan(ScanOptions(target=str(target), command="mcp-zoo-shadow-tools",
                                  timeouts=Timeouts(startup=60, request=30), policy=RunPolicy(env={"a.b": "1"})))
    previews = [probe.preview for probe in report.probes if probe.tool == "shadowed"]
    assert previews and all(preview == "SHADOWED: none" for preview in previews), previews
    assert report.sandbox is not None and report.sandbox.namespace is not None  # the namespace was read, by /bin/sh
