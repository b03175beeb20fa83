"""The scan's spinner is drawn by rich only on a terminal; scanner/cli/spinner.py tells beforehand, so a scan whose
stderr is a pipe or a file loads no rich for it. Pure checks of the rule, and real scans (the zoo's server) in a
subprocess whose stderr is a pipe."""

from __future__ import annotations

import io
import os
import subprocess
import sys
from pathlib import Path

import pytest

from scanner.cli.spinner import RICH_TERMINAL_ENV, spinner_shows
from tests.sandbox_helpers import ZOO


class Tty(io.StringIO):
    def isatty(self) -> bool:
        return True


class Closed(io.StringIO):
    def isatty(self) -> bool:
        raise ValueError("I/O operation on closed file")


def test_a_terminal_shows_the_spinner_and_a_pipe_or_file_does_not() -> None:
    assert spinner_shows(Tty(), environ={}) is True
    assert spinner_shows(io.StringIO(), environ={}) is False
    assert spinner_shows(Closed(), environ={}) is False
    assert spinner_shows(object(), environ={}) is False  # type: ignore[arg-type]  # no isatty at all


@pytest.mark.parametrize("name", RICH_TERMINAL_ENV)
def test_riches_own_overrides_leave_the_choice_to_rich(name: str) -> None:
    assert spinner_shows(io.StringIO(), environ={name: "1"}) is True
    assert spinner_shows(io.StringIO(), environ={name: "0"}) is True  # rich reads the value; it decides


PROBE = ("import sys\nfrom scanner.cli.app import main\nsys.argv = ['mcp-sandbox', *sys.argv[1:]]\n"
         "try:\n    main()\nexcept SystemExit:\n    pass\n"
         "print('RICH', any(m.startswith('rich') for m, v in sys.modules.items() if v is not None), file=sys.stderr)")


def _scan_loads_rich(tmp_path: Path, **env: str) -> bool:
    args = ["scan", str(ZOO), "--command", "zoo-plain", "--no-probes", "-q", "--json", str(tmp_path / "r.json"),
            "--fail-on", "never"]
    clean = {k: v for k, v in os.environ.items() if k not in RICH_TERMINAL_ENV}
    result = subprocess.run([sys.executable, "-c", PROBE, *args], capture_output=True, text=True, timeout=300,
                            env={**clean, **env}, cwd=tmp_path)
    assert (tmp_path / "r.json").is_file(), result.stderr[-2000:]
    line = [text for text in result.stderr.splitlines() if "RICH " in text][-1]  # after the spinner's own erase
    return line.endswith("RICH True")


@pytest.mark.docker
def test_a_quiet_scan_into_a_pipe_loads_no_rich(tmp_path: Path, no_leftovers: None) -> None:
    assert _scan_loads_rich(tmp_path) is False


@pytest.mark.docker
def test_the_near_miss_forced_colour_still_draws_with_rich(tmp_path: Path, no_leftovers: None) -> None:
    assert _scan_loads_rich(tmp_path, FORCE_COLOR="1") is True
