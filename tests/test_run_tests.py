"""`make test`'s runner (scripts/run_tests.py): the Docker tests and the tests that need no engine as two pytest
runs at once, one exit code for both, and the second run's failures shown whole once both are done."""

from __future__ import annotations

import importlib.util
import os
import signal
import subprocess
import sys
import time
from pathlib import Path
from types import ModuleType

import pytest

from tests.sandbox_helpers import REPO

SUITE = '''
import pytest

@pytest.mark.docker
def test_in_the_docker_run():
    pass

def test_in_the_other_run():
    assert {outcome}, "the no-engine run's own failure"
'''


def _runner() -> ModuleType:
    spec = importlib.util.spec_from_file_location("run_tests", REPO / "scripts" / "run_tests.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


@pytest.mark.parametrize(("docker", "no_engine", "code"), [
    (0, 0, 0), (0, 5, 0), (5, 0, 0), (5, 5, 5), (1, 0, 1), (0, 1, 1), (2, 1, 2), (5, 1, 1), (0, -15, 143)])
def test_the_exit_code_is_the_first_failing_run_s_and_an_empty_selection_is_no_failure(docker: int, no_engine: int,
                                                                                        code: int) -> None:
    assert _runner()._exit_code(docker, no_engine) == code


@pytest.mark.parametrize(("outcome", "code"), [("True", 0), ("False", 1)])
def test_both_runs_run_and_a_failure_of_the_other_run_is_shown_and_fails_the_whole(
        tmp_path: Path, capfd: pytest.CaptureFixture[str], outcome: str, code: int) -> None:
    suite = tmp_path / "test_two_kinds.py"
    suite.write_text(SUITE.format(outcome=outcome))
    (tmp_path / "pytest.ini").write_text("[pytest]\nmarkers =\n    docker: the Docker run's\n")
    log = tmp_path / "logs" / "no-engine.log"
    assert _runner().main([str(suite), "-p", "no:cacheprovider"], log) == code
    shown = capfd.readouterr().out
    docker_part, other_part = shown.split("===== tests that need no engine")
    assert "1 passed, 1 deselected" in docker_part  # the Docker test ran in the foreground run, alone
    if code == 0:
        assert other_part.splitlines()[1].startswith("1 passed, 1 deselected")  # its summary line alone
    else:
        assert "the no-engine run's own failure" in other_part and "1 failed, 1 deselected" in other_part
    kept = log.read_text()
    assert "1 passed, 1 deselected" in kept if code == 0 else kept in shown  # nothing of that run is lost


WAITING = """
import os, time
from pathlib import Path
import pytest

def _wait(name):
    Path(os.environ["MARKS"], name).write_text(str(os.getpid()))
    time.sleep(60)

@pytest.mark.docker
def test_in_the_docker_run():
    _wait("docker")

def test_in_the_other_run():
    _wait("other")
"""
RUN_MAIN = ("import importlib.util, sys; from pathlib import Path; "
            "spec = importlib.util.spec_from_file_location('run_tests', sys.argv[1]); "
            "module = importlib.util.module_from_spec(spec); spec.loader.exec_module(module); "
            "sys.exit(module.main(sys.argv[3:], Path(sys.argv[2])))")


def _running(pid: int) -> bool:
    try:
        return Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0] != "Z"
    except (OSError, IndexError):
        return False


def test_a_sigterm_to_the_runner_alone_ends_both_runs(tmp_path: Path) -> None:
    suite, marks = tmp_path / "test_waiting.py", tmp_path / "marks"
    suite.write_text(WAITING)
    (tmp_path / "pytest.ini").write_text("[pytest]\nmarkers =\n    docker: the Docker run's\n")
    marks.mkdir()
    runner = subprocess.Popen([sys.executable, "-c", RUN_MAIN, str(REPO / "scripts" / "run_tests.py"),
                               str(tmp_path / "no-engine.log"), str(suite), "-p", "no:cacheprovider"],
                              env={**os.environ, "MARKS": str(marks)}, stdout=subprocess.PIPE, text=True)
    deadline = time.monotonic() + 30
    while len(list(marks.iterdir())) < 2:
        assert time.monotonic() < deadline and runner.poll() is None, "the two runs did not both start"
        time.sleep(0.05)
    pids = [int((marks / name).read_text()) for name in ("docker", "other")]
    runner.send_signal(signal.SIGTERM)
    out, _ = runner.communicate(timeout=30)  # the tests would sleep a minute
    assert runner.returncode == 128 + signal.SIGTERM, out
    assert not any(_running(pid) for pid in pids)
    assert "===== tests that need no engine" in out  # the runner still summed up


@pytest.mark.parametrize("marker", [["-m", "not slow"], ["-mnot slow"]])
def test_a_marker_expression_of_the_caller_s_narrows_each_run_and_never_runs_the_docker_tests_twice(
        tmp_path: Path, capfd: pytest.CaptureFixture[str], marker: list[str]) -> None:
    """Before: `-m EXPR` came after each run's own `-m` and replaced it (pytest takes the last), so both runs ran
    every test EXPR selected, the Docker ones twice at once."""
    suite = tmp_path / "test_two_kinds.py"
    suite.write_text(SUITE.format(outcome="True") + "\n@pytest.mark.slow\ndef test_slow():\n    pass\n")
    (tmp_path / "pytest.ini").write_text("[pytest]\nmarkers =\n    docker: the Docker run's\n    slow: slow\n")
    log = tmp_path / "no-engine.log"
    assert _runner().main([str(suite), "-p", "no:cacheprovider", *marker], log) == 0
    docker_part, _ = capfd.readouterr().out.split("===== tests that need no engine")
    assert "1 passed, 2 deselected" in docker_part  # the Docker test alone
    assert "1 passed, 2 deselected" in log.read_text()  # the other test alone: neither the Docker one nor the slow one
