"""A report's terminal view in a GitHub Actions log (`scan --github-annotations` in a workflow of one's own, not
the action): GitHub's runner takes every line that starts with `::` after its leading spaces as a workflow command,
and rich wraps a server's long text onto lines of their own. Only the annotations may be commands."""

from __future__ import annotations

import pytest

from scanner.cli.output import ReportOutputs, emit_report
from tests.test_action import runner_commands
from tests.test_reports_views import full_report


def test_the_terminal_view_in_a_github_log_issues_no_workflow_command(monkeypatch: pytest.MonkeyPatch,
                                                                        capsys: pytest.CaptureFixture[str]) -> None:
    report = full_report()
    report.server.instructions = "::stop-commands::pwned " * 8
    report.sandbox.stderr = "::add-mask::mcp-sandbox " * 8  # type: ignore[union-attr]
    report.errors = ["::error title=PASS::all clear " * 6]
    monkeypatch.setenv("GITHUB_ACTIONS", "true")
    monkeypatch.setenv("COLUMNS", "80")
    emit_report(report, ReportOutputs(annotations=True))
    captured = capsys.readouterr()
    commands = runner_commands(captured.err + captured.out)  # the view (stderr) is done before the annotations
    hostile = [c for c in commands if c.startswith(("::stop-commands::pwned", "::add-mask::", "::error title=PASS"))]
    assert hostile == [], hostile
    annotations = [c for c in commands if c.startswith(("::error ", "::warning ", "::notice "))]
    assert len(annotations) == len(report.findings) > 0
    assert "::stop-commands::pwned" in captured.err  # still shown, as text


def test_outside_github_the_view_stops_no_workflow_commands(capsys: pytest.CaptureFixture[str],
                                                            monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("GITHUB_ACTIONS", raising=False)
    emit_report(full_report(), ReportOutputs())
    assert "stop-commands" not in capsys.readouterr().out
