"""An interrupted scan's last line is true to its teardown: torn down, not fully torn down (what was left, the
engine's words escaped), or the teardown failed; exit 130 in each case."""

from __future__ import annotations

from typing import Any

import pytest
import typer

from scanner.pipeline.interrupts import ScanInterrupted, interrupted_line


def test_the_line_says_what_the_teardown_left() -> None:
    assert interrupted_line([]) == "interrupted; the sandbox was torn down"
    assert interrupted_line(["c1", "c2 (the engine refused to remove it: busy)"]) == (
        "interrupted; the sandbox was not fully torn down: left c1, c2 (the engine refused to remove it: busy); "
        "`mcp-sandbox gc` removes what is left")
    assert interrupted_line(None).startswith("interrupted; the sandbox's teardown failed")


def _scan_interrupted_by(monkeypatch: pytest.MonkeyPatch, interrupt: KeyboardInterrupt) -> int:
    from scanner.cli import scan
    from scanner.pipeline import image_scan

    def run_target(*_args: Any, **_kwargs: Any) -> None:
        raise interrupt

    monkeypatch.setattr(image_scan, "run_target", run_target)
    with pytest.raises(typer.Exit) as ended:
        scan._run(object())  # type: ignore[arg-type]
    return ended.value.exit_code


def test_the_cli_ends_an_interrupted_scan_with_its_teardown_s_line_escaped(monkeypatch, capsys) -> None:
    code = _scan_interrupted_by(monkeypatch, ScanInterrupted(["c1 (the engine refused to remove it: \x1b[2Jbusy)"]))
    err = capsys.readouterr().err
    assert code == 130 and err.startswith("interrupted; the sandbox was not fully torn down: left c1")
    assert "\x1b" not in err  # the engine's words are shown, not obeyed


def test_the_near_miss_a_plain_interrupt_before_the_scan_s_session_ends_as_before(monkeypatch, capsys) -> None:
    assert _scan_interrupted_by(monkeypatch, KeyboardInterrupt()) == 130
    assert capsys.readouterr().err == "interrupted; the sandbox was torn down\n"
