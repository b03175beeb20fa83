"""What a scan prints while it runs, before any report: the spinner's steps (`probing TOOL (1/3): LABEL` names a
server's tool) and the error lines of `init-fixtures` (a server's JSON-RPC error message). Both are untrusted text:
plain (never rich markup) and with every control, bidi and format character escaped."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import pytest

from scanner.cli import scan as scan_cli
from scanner.pipeline import image_scan
from scanner.report.model import Report, TargetInfo
from tests.cli_helpers import run_main

# An OSC 52 clipboard write (ended by ST), a screen clear, an OSC 8 hyperlink in rich markup, a bidi override.
HOSTILE_TOOL = "\x1b]52;c;cm0gLXJmIH4=\x1b\\ \x1b[2J [link=https://evil.example/]read_file[/link]\u202e"
OSC = re.compile("\x1b\\]")


def _report(**fields: Any) -> Report:
    return Report(target=TargetInfo(kind="npm", name="x", requested="npm:x"), **fields)


@pytest.mark.parametrize("tool", [HOSTILE_TOOL, "x[/]", "[bold red]PASS[/bold red]"])
def test_the_spinner_shows_a_tool_name_as_escaped_plain_text(monkeypatch: pytest.MonkeyPatch,
                                                             capsys: pytest.CaptureFixture[str], tool: str) -> None:
    def run_target(options: Any, progress: Any, head_start: Any = None) -> Report:
        progress(f"probing {tool} (1/3): valid"[:120])
        return _report()

    monkeypatch.setenv("FORCE_COLOR", "1")  # rich draws the spinner as on a terminal
    monkeypatch.setattr(image_scan, "run_target", run_target)
    report = scan_cli._run(object())  # type: ignore[arg-type]
    err = capsys.readouterr().err
    assert report.target.requested == "npm:x"  # no MarkupError from a name such as `x[/]`
    assert not OSC.search(err) and "\u202e" not in err and "\x1b[2J" not in err, repr(err)
    assert "probing" in err and "[/" in err  # the name is shown, brackets and all


def test_a_long_step_stays_on_one_line_cut_with_an_ellipsis(monkeypatch: pytest.MonkeyPatch,
                                                            capsys: pytest.CaptureFixture[str]) -> None:
    step = "installing @scope/a-long-server-name@1.2.3: npm install --ignore-scripts (fetching the tree; no " \
           "install script runs) END"

    def run_target(options: Any, progress: Any, head_start: Any = None) -> Report:
        progress(step)
        return _report()

    monkeypatch.setenv("FORCE_COLOR", "1")
    monkeypatch.setenv("COLUMNS", "60")
    monkeypatch.setattr(image_scan, "run_target", run_target)
    scan_cli._run(object())  # type: ignore[arg-type]
    err = capsys.readouterr().err
    assert "installing @scope/a-long" in err and "…" in err and "END" not in err, repr(err)


def test_init_fixtures_escapes_the_servers_error_text(monkeypatch: pytest.MonkeyPatch,
                                                      capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    error = "listing tools: the server answered with error -1: \x1b]52;c;aGk=\x07\x1b[2J\r\u202eall good"
    monkeypatch.setattr(image_scan, "run_target", lambda options, progress: _report(errors=[error]))
    code, _, err = run_main(monkeypatch, capsys, "init-fixtures", tmp_path / "fixtures.json", "npm:x")
    assert code == 3
    assert "\x1b" not in err and "\r" not in err and "\u202e" not in err, repr(err)
    assert "error: listing tools: the server answered with error -1: \\e]52;c;aGk=\\a\\e[2J\\r\\u202eall good" in err
