"""Run the `mcp-sandbox` entry point in this process, as a user would from a shell (exit code and all output)."""

from __future__ import annotations

import sys
from typing import Any

import pytest

from scanner.cli.app import main


def run_cli(monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str], *args: Any) -> tuple[int, str]:
    """(exit code, stdout and stderr with whitespace runs joined into single spaces)."""
    code, out, err = run_main(monkeypatch, capsys, *args)
    return code, " ".join((out + err).split())


def run_main(monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str], *args: Any) -> tuple[int, str, str]:
    """(exit code, stdout, stderr) of `mcp-sandbox ARGS…`."""
    monkeypatch.setattr(sys, "argv", ["mcp-sandbox", *map(str, args)])
    with pytest.raises(SystemExit) as exc:
        main()
    captured = capsys.readouterr()
    return int(exc.value.code or 0), captured.out, captured.err
