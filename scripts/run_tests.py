"""`make test`: the whole suite as two pytest runs at once.

The tests marked `docker` run one after another against the real engine, as they were written to, and stream to the
terminal; they are most of the suite's time, and much of it is waiting (a container's boot, a timeout, a broker's
redelivery). The tests that need no engine run beside them, at a lower CPU priority so the Docker tests' timing is
theirs, with their output kept in build/test-logs/no-engine.log; once both are done their summary follows (all of
their output when one failed). The exit code is pytest's: 0 when both passed, else the first run's that did not.

Arguments go to both runs (`scripts/run_tests.py -x --durations=20`); a marker expression of the caller's
(`-m "not registry"`) narrows each run's own (`(not registry) and docker`) rather than replacing it, which would have
both runs run the same tests at once. To run a part of the suite otherwise, call pytest itself.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
LOG = REPO / "build" / "test-logs" / "no-engine.log"
NO_ENGINE_NICENESS = 10  # the Docker tests, the long pole, keep the CPU when both want it
NO_TESTS_COLLECTED = 5  # pytest's exit code when a run's selection is empty


def _pytest(marker: str, args: list[str]) -> list[str]:
    """One run's command: its own marker, narrowed by the caller's `-m EXPR` or `-mEXPR` (the last, as pytest takes
    it) when there is one."""
    rest, wanted, index = [], None, 0
    while index < len(args):
        arg = args[index]
        if arg == "-m" and index + 1 < len(args):
            wanted, index = args[index + 1], index + 2
            continue
        if arg.startswith("-m") and len(arg) > 2:
            wanted = arg[2:]
        else:
            rest.append(arg)
        index += 1
    expression = marker if wanted is None else f"({wanted}) and ({marker})"
    return [sys.executable, "-m", "pytest", "-q", "-m", expression, *rest]


def _lower_priority() -> None:
    os.nice(NO_ENGINE_NICENESS)


def _summary(text: str) -> str:
    lines = [line for line in text.splitlines() if line.strip()]
    return lines[-1] if lines else "(no output)"


def _exit_code(docker: int, no_engine: int) -> int:
    """The first run's code that is not 0 (a run a signal ended as the shell says it: 128 + the signal), or 0; a run
    whose selection was empty fails only when both were."""
    docker, no_engine = (128 - code if code < 0 else code for code in (docker, no_engine))
    codes = [code for code in (docker, no_engine) if code != NO_TESTS_COLLECTED] or [NO_TESTS_COLLECTED]
    return next((code for code in codes if code != 0), 0)


def _wait_for_both(docker: subprocess.Popen[bytes], no_engine: subprocess.Popen[bytes]) -> None:
    """Wait for both runs. Ctrl-C reaches them from the terminal (one process group), so this process ignores it
    and waits while they tear their sandboxes down and sum up; a SIGTERM sent to this process alone is passed on."""
    def forward(signum: int, _frame: object) -> None:
        for child in (docker, no_engine):
            if child.poll() is None:
                child.send_signal(signum)

    previous = {number: signal.signal(number, handler)
                for number, handler in ((signal.SIGINT, signal.SIG_IGN), (signal.SIGTERM, forward))}
    try:
        docker.wait()
        if no_engine.poll() is None:
            print("waiting for the tests that need no engine ...", flush=True)
        no_engine.wait()
    finally:
        for number, handler in previous.items():
            signal.signal(number, handler)


def main(args: list[str], log_path: Path = LOG) -> int:
    log_path.parent.mkdir(parents=True, exist_ok=True)
    shown = log_path.relative_to(REPO) if log_path.is_relative_to(REPO) else log_path
    started = time.monotonic()
    with log_path.open("wb") as log:
        no_engine = subprocess.Popen(_pytest("not docker", args), cwd=REPO, stdout=log, stderr=subprocess.STDOUT,
                                     stdin=subprocess.DEVNULL, preexec_fn=_lower_priority)
        print(f"tests that need no engine: running beside these, output in {shown}", flush=True)
        docker = subprocess.Popen(_pytest("docker", args), cwd=REPO)
        _wait_for_both(docker, no_engine)
    text = log_path.read_text(errors="replace")
    print(f"\n===== tests that need no engine ({shown}) =====")
    print(text if no_engine.returncode not in (0, NO_TESTS_COLLECTED) else _summary(text))
    print(f"both runs ended after {time.monotonic() - started:.0f} s")
    return _exit_code(docker.returncode, no_engine.returncode)


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
